#include "schedules/requantize.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;

Int8Range int8_range(const Workload& w) {
  user_check(w.dtype == DataType::u8() || w.dtype == DataType::i8())
      << w.str() << ": int8 kernels take u8 or i8 data, not " << w.dtype.str();
  return w.dtype == DataType::u8() ? Int8Range{0, 255} : Int8Range{-128, 127};
}

Requantize requantize_params(const Workload& w) {
  const Int8Range t = int8_range(w);
  Requantize r;
  r.a_zero = w.param_or("a_zero", 0);
  r.requantize = w.param_or("requantize", 1) != 0;
  r.y_zero = w.param_or("y_zero", 0);
  r.y_lo = w.param_or("y_lo", t.lo);
  r.y_hi = w.param_or("y_hi", t.hi);
  user_check(r.a_zero >= t.lo && r.a_zero <= t.hi)
      << w.str() << ": a_zero " << r.a_zero << " is outside " << w.dtype.str() << "'s range";
  if (r.requantize) {
    user_check(r.y_zero >= t.lo && r.y_zero <= t.hi)
        << w.str() << ": y_zero " << r.y_zero << " is outside " << w.dtype.str() << "'s range";
    user_check(t.lo <= r.y_lo && r.y_lo <= r.y_hi && r.y_hi <= t.hi)
        << w.str() << ": the output bounds [" << r.y_lo << ", " << r.y_hi << "] are not within "
        << w.dtype.str() << "'s range";
  }
  return r;
}

std::vector<std::string> requantize_value_params() {
  return {"a_zero", "y_zero", "y_lo", "y_hi"};
}

DataType int8_output_type(const Workload& w) {
  return w.param_or("requantize", 1) != 0 ? w.dtype : DataType::i32();
}

Expr requantize_expr(const Requantize& r, DataType out, Expr sum, Expr scale) {
  if (!r.requantize) return sum;
  const DataType f32 = DataType::f32();
  // Every step in f32 as ONNX Runtime: the int32 sum rounded to f32, one f32 product,
  // rounded half to even; the zero point and bounds are small integers, exact in f32.
  Expr y = ir::make_call(f32, "round", {ir::make_cast(f32, sum) * scale});
  y = y + ir::make_const(f32, double(r.y_zero));
  y = ir::max(ir::min(y, ir::make_const(f32, double(r.y_hi))), ir::make_const(f32, double(r.y_lo)));
  return ir::make_cast(out, y);
}

float requantize_reference(const Requantize& r, double sum, float scale) {
  if (!r.requantize) return static_cast<float>(sum);
  const float scaled = static_cast<float>(sum) * scale;
  const double q = std::nearbyint(double(scaled)) + double(r.y_zero);
  return static_cast<float>(std::clamp(q, double(r.y_lo), double(r.y_hi)));
}

}  // namespace kiln::schedules
