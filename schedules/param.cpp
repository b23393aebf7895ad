#include "schedules/param.h"

#include <charconv>

#include "compiler/base/error.h"

namespace kiln::schedules {

int64_t Param::integer(const std::string& what) const {
  user_check(is_integer()) << what << " = " << str() << " must be an integer";
  return std::get<int64_t>(value_);
}

double Param::real() const {
  return is_integer() ? static_cast<double>(std::get<int64_t>(value_)) : std::get<double>(value_);
}

std::string Param::str() const {
  if (is_integer()) return std::to_string(std::get<int64_t>(value_));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::get<double>(value_));
  std::string s(buf, end);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": nan and inf
  return s;
}

}  // namespace kiln::schedules
