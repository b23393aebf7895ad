// A workload parameter's value, kept in its real type: an integer (a size, a stride, a mode)
// or a real number (a clip bound, a slope, an epsilon, a resize scale, a quantization scale).
// Reals are carried exactly as the model states them, never in fixed point, so a bound of
// 0.0001 or a scale of 0.0123456 reaches the kernel unchanged and is part of the workload's
// key exactly (records, history-best, the compile cache).
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <string>
#include <variant>

namespace kiln::schedules {

class Param {
 public:
  Param() = default;
  template <std::integral I>
  requires(!std::same_as<I, bool>) Param(I v)
      : value_(static_cast<int64_t>(v)) {}            // NOLINT: sizes read naturally as `= 64`
  Param(double v) : value_(v) {}                      // NOLINT
  Param(float v) : value_(static_cast<double>(v)) {}  // NOLINT: every float is a double

  bool is_integer() const { return std::holds_alternative<int64_t>(value_); }
  bool is_real() const { return !is_integer(); }
  // The integer; UserError naming `what` when the value is a real.
  int64_t integer(const std::string& what = "parameter") const;
  // The value as a real (an integer converts).
  double real() const;

  // Integers as digits, reals as the shortest text that reads back to the same double
  // (always with a '.' or an exponent, so 1.0 stays distinct from 1).
  std::string str() const;

  friend bool operator==(const Param&, const Param&) = default;
  friend auto operator<=>(const Param& a, const Param& b) { return a.value_ <=> b.value_; }

 private:
  std::variant<int64_t, double> value_ = int64_t{0};
};

}  // namespace kiln::schedules
