// Out-of-line message building for the runtime's errors (message.h).
#include "message.h"

#include <cinttypes>
#include <cstdio>

namespace kiln {

Num::Num(uint64_t v, bool hex16) {
  const int n = std::snprintf(text_, sizeof text_, hex16 ? "%016" PRIx64 : "%" PRIu64, v);
  length_ = n > 0 ? static_cast<std::size_t>(n) : 0;
}

Num::Num(int64_t v) {
  const int n = std::snprintf(text_, sizeof text_, "%" PRId64, v);
  length_ = n > 0 ? static_cast<std::size_t>(n) : 0;
}

std::string concat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  std::string s;
  s.reserve(size);
  for (std::string_view p : parts) s.append(p.data(), p.size());
  return s;
}

void throw_error(ErrorCode code, std::initializer_list<std::string_view> parts) {
  throw RuntimeError(code, concat(parts));
}

}  // namespace kiln
