// Private to the runtime: error messages built out of line. Error paths are many and cold, and
// chains of std::string operator+ inlined at each of them were the bulk of the runtime's code;
// a list of string_view pieces costs two stores per piece at the call site.
//
//   throw_error(ErrorCode::kLoad, {"kiln: '", path, "' has ", Num(n), " bytes"});
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "kiln/runtime.h"

namespace kiln {

// A number rendered into a buffer of its own, usable as one piece of a message. Lives until the
// end of the full expression that created it, like any temporary.
class Num {
 public:
  Num(uint64_t v, bool hex16 = false);  // hex16: exactly 16 lowercase hex digits
  Num(int64_t v);
  Num(int v) : Num(static_cast<int64_t>(v)) {}
  Num(unsigned v) : Num(static_cast<uint64_t>(v)) {}
  operator std::string_view() const { return {text_, length_}; }

 private:
  char text_[24];
  std::size_t length_ = 0;
};

std::string concat(std::initializer_list<std::string_view> parts);
[[noreturn]] void throw_error(ErrorCode code, std::initializer_list<std::string_view> parts);

}  // namespace kiln
