// quantize.flat and dequantize.flat (schedules/elementwise/quantize.h) against their exact
// reference, u8 and i8, on AVX2 natively and AArch64 under qemu: values on the rounding ties
// (x / scale = k + 0.5 rounds to the even k), past both ends of the range (saturated), and
// scales that are not powers of two (the division is f32's, rounded once).
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/base/error.h"
#include "schedules/elementwise/qlinear_add.h"
#include "schedules/elementwise/quantize.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::KernelArg;
using schedules::Values;
using schedules::Workload;

std::string check(const Workload& w, const std::string& target, bool ties) {
  const bool quantize = w.op == "quantize";
  const auto& tpl = quantize ? schedules::quantize_template() : schedules::dequantize_template();
  InputCheck ic;
  const double scale = w.real("scale");
  ic.adjust = [ties, scale, quantize](const KernelArg&, Values& v) {
    if (!quantize) return;  // u8/i8 values over the whole range already
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = ties ? static_cast<float>((double(i % 601) - 300.5) * scale)  // k + 0.5, |k| <= 300
                  : static_cast<float>(v[i] * 200 * scale);
  };
  ic.out_dtype = quantize ? w.dtype : DataType::f32();
  ic.rtol = 0;
  return check_template_inputs(tpl, w, target, tpl.fallback(w, target_from_name(target)), ic);
}

TEST(QuantizeTemplate, BothDirectionsExactOnEveryType) {
  for (const char* target : {"x86-avx2", "arm-neon"})
    for (DataType t : {DataType::u8(), DataType::i8()})
      for (const char* op : {"quantize", "dequantize"})
        for (double scale : {0.0078125, 0.0213})
          for (bool ties : {false, true}) {
            const int64_t zero = t == DataType::u8() ? 131 : -3;
            const Workload w = schedules::quantize_workload(op, 1203, t, scale, zero);
            SCOPED_TRACE(w.str() + " on " + target + (ties ? " ties" : ""));
            const std::string skip = check(w, target, ties);
            if (!skip.empty()) GTEST_SKIP() << skip;
          }
}

// ONNX Runtime's ratios and offset for scales sa, sb over sy and zero points za, zb, zy
// (graph/ops/quantized_contrib.h).
schedules::QLinearAddParams ratios(float sa, float sb, float sy, float za, float zb, float zy) {
  const float ra = sa / sy, rb = sb / sy;
  return {ra, rb, zy - std::fma(ra, za, rb * zb)};
}

// qlinear_add.flat against its reference, bit for bit, u8 and i8: scales that are not powers
// of two with a sum that saturates at both ends, and decimal scales (0.05 a + 0.03 b over 0.1)
// whose sums fall on rounding ties, where a product and a sum in place of each fused step
// would round differently.
TEST(QLinearAddTemplate, ExactOnEveryType) {
  for (const char* target : {"x86-avx2", "x86-avx512", "arm-neon"})
    for (DataType t : {DataType::u8(), DataType::i8()})
      for (bool ties : {false, true}) {
        const bool u8 = t == DataType::u8();
        const float za = ties ? (u8 ? 110 : 0) : (u8 ? 131 : -3),
                    zb = ties ? (u8 ? 120 : -8) : (u8 ? 7 : 20);
        const schedules::QLinearAddParams p =
            ties ? ratios(0.05f, 0.03f, 0.1f, za, zb, 0)
                 : ratios(0.0213f, 0.047f, 0.031f, za, zb, u8 ? 0 : -128);
        const Workload w = schedules::qlinear_add_workload(1203, t, p);
        SCOPED_TRACE(w.str() + " on " + target);
        const auto& tpl = schedules::qlinear_add_template();
        InputCheck ic;
        ic.out_dtype = t;
        ic.rtol = 0;
        // Every other b at its zero point: the sum is then 0.5 (a - a_zero) where ties, on a
        // rounding tie for every odd a - a_zero, both signs.
        ic.adjust = [zb](const schedules::KernelArg& arg, schedules::Values& v) {
          if (arg.logical.name != "B") return;
          for (size_t i = 0; i < v.size(); i += 2) v[i] = zb;
        };
        const std::string skip =
            check_template_inputs(tpl, w, target, tpl.fallback(w, target_from_name(target)), ic);
        if (!skip.empty()) GTEST_SKIP() << skip;
      }
}

TEST(QuantizeTemplate, BadScalesAndZeroPointsAreRefused) {
  const Target t = target_from_name("x86-avx2");
  const auto& q = schedules::quantize_template();
  for (double scale : {0.0, -0.5})
    EXPECT_THROW(
        q.validate(schedules::quantize_workload("quantize", 8, DataType::u8(), scale, 0), t),
        UserError);
  EXPECT_THROW(q.validate(schedules::quantize_workload("quantize", 8, DataType::u8(), 0.1, 256), t),
               UserError);
  EXPECT_THROW(
      q.validate(schedules::quantize_workload("quantize", 8, DataType::i8(), 0.1, -129), t),
      UserError);
  const auto& add = schedules::qlinear_add_template();
  EXPECT_THROW(
      add.validate(schedules::qlinear_add_workload(8, DataType::u8(), {0.5, HUGE_VAL, 3}), t),
      UserError);
  EXPECT_THROW(add.validate(schedules::qlinear_add_workload(8, DataType::f32(), {0.5, 0.3, 3}), t),
               UserError);
}

}  // namespace
}  // namespace kiln::testing
