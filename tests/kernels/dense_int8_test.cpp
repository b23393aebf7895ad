// dense.int8 (schedules/dense/int8.h) against its exact integer reference: u8 and i8
// activations with a zero point, int8 weights, int32 bias, requantized u8/i8 output (fused
// Relu bounds included) or the int32 sum, over awkward shapes (odd K, M = 1, tiles that do
// not divide); AVX2 natively, AVX-512 where this CPU has it, AArch64 under qemu. The extremes
// (A = 255, B = 127 or -128 everywhere) are where `vpmaddubsw` would saturate: the sums here
// must be exact. Assembly: `vpmaddwd` on AVX2/AVX-512, `vpdpwssd` with VNNI, never
// `vpmaddubsw`.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/base/error.h"
#include "schedules/dense/int8.h"
#include "schedules/registry.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/int8_check.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::KernelArg;
using schedules::OpTemplate;
using schedules::Values;
using schedules::Workload;

const OpTemplate& tpl() {
  return schedules::dense_int8_template();
}

struct Int8Case {
  int64_t m, n, k;
  DataType a;
  int64_t a_zero = 0;
  bool bias = false;
  bool requantize = true;
  int64_t y_zero = 0, y_lo = -1, y_hi = -1;  // -1: the type's bounds
};

Workload workload(const Int8Case& c) {
  Workload w{"dense", {{"M", c.m}, {"N", c.n}, {"K", c.k}}, c.a, {}};
  w.params["a_zero"] = c.a_zero;
  w.params["requantize"] = c.requantize ? 1 : 0;
  if (c.requantize) {
    w.params["y_zero"] = c.y_zero;
    if (c.y_lo >= 0) w.params["y_lo"] = c.y_lo;
    if (c.y_hi >= 0) w.params["y_hi"] = c.y_hi;
  }
  if (c.bias) w.epilogue.push_back("bias");
  return w;
}

std::string check(const Workload& w, const std::string& target, const Config& cfg,
                  std::function<void(const KernelArg&, Values&)> adjust = {}) {
  return check_int8(tpl(), w, target, cfg, std::move(adjust));
}

std::vector<TemplateCase> cases() {
  const DataType u8 = DataType::u8(), i8 = DataType::i8();
  // K <= 500 wherever the output is the int32 sum: it is compared through f32, exact below
  // 2^24 (500 x 255 x 128 < 2^24).
  const std::vector<Int8Case> shapes = {
      {37, 53, 30, u8, 128, true},
      {1, 100, 64, u8, 3, true},
      {64, 64, 64, i8, -5},
      {13, 17, 7, u8, 0, true, true, 10, 10, -1},  // fused Relu: y >= y_zero
      {3, 5, 1, i8, 0, false, true, -3},
      {19, 40, 33, u8, 200, true, false},  // MatMulInteger: the int32 sum
      {16, 96, 257, i8, 0, true, false},
      {5, 24, 300, u8, 1, true, true, 100, 20, 230},  // Clip bounds
  };
  std::vector<TemplateCase> out;
  for (const Int8Case& s : shapes)
    for (int cfg = -1; cfg < 2; ++cfg) out.push_back({workload(s), "x86-avx2", cfg, &tpl()});
  for (const Int8Case& s : shapes) out.push_back({workload(s), "x86-avx512", -1, &tpl()});
  // The pair dots' VNNI form (vpdpwssd), where this CPU runs it.
  for (const Int8Case& s : shapes) out.push_back({workload(s), "cascadelake", -1, &tpl()});
  // Under qemu: fewer, each run costs a process start.
  for (size_t i : {0, 3, 5})
    for (int cfg = -1; cfg < 1; ++cfg)
      out.push_back({workload(shapes[i]), "arm-neon", cfg, &tpl()});
  return out;
}

class DenseInt8Test : public Int8TemplateTest {};

TEST_P(DenseInt8Test, MatchesExactReference) {
  check_case();
}

INSTANTIATE_TEST_SUITE_P(DenseInt8, DenseInt8Test, ::testing::ValuesIn(cases()),
                         template_case_name);

// Every value of every knob, on a shape no tile divides.
TEST(DenseInt8Space, EveryKnobValue) {
  const Workload w = workload({11, 45, 13, DataType::u8(), 77, true});
  const Target t = target_from_name("x86-avx2");
  for (const Config& cfg :
       knob_sweep(tpl(), w, t, {"mr", "nr_vecs", "k_unroll", "panels_outer", "parallel"})) {
    const std::string skip = check(w, "x86-avx2", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

// All-extreme operands: every pair sum is 2 x 255 x 127 = 64770 (or -65280), past int16,
// where `vpmaddubsw` saturates to 32767. The int32 sums must still be exact.
TEST(DenseInt8Extremes, NoSixteenBitSaturation) {
  for (float weight : {127.0f, -128.0f})
    for (const char* target : {"x86-avx2", "x86-avx512", "arm-neon"}) {
      SCOPED_TRACE(std::string(target) + " weight " + std::to_string(weight));
      const Workload w = workload({4, 16, 64, DataType::u8(), 0, false, false});
      const Target t = target_from_name(target);
      const std::string skip =
          check(w, target, tpl().fallback(w, t), [weight](const KernelArg& a, Values& v) {
            std::fill(v.begin(), v.end(), a.logical.name == "A" ? 255.0f : weight);
          });
      if (!skip.empty()) std::printf("skipped on %s: %s\n", target, skip.c_str());
    }
}

TEST(DenseInt8Errors, ZeroPointsAndBoundsOutOfRange) {
  const Target t = target_from_name("x86-avx2");
  auto refused = [&](Int8Case c) {
    const Workload w = workload(c);
    EXPECT_THROW(tpl().instantiate(w, t, tpl().fallback(workload({8, 8, 8, c.a}), t)), UserError)
        << w.str();
  };
  refused({8, 8, 8, DataType::u8(), 256});                        // a_zero past u8
  refused({8, 8, 8, DataType::i8(), 128});                        // a_zero past i8
  refused({8, 8, 8, DataType::u8(), 0, false, true, -1});         // y_zero below u8
  refused({8, 8, 8, DataType::i8(), 0, false, true, 0, 50, 10});  // y_lo > y_hi
  // Float dense stays with the float templates, integers come here.
  Workload f{"dense", {{"M", 4}, {"N", 4}, {"K", 4}}, DataType::f32(), {}};
  EXPECT_FALSE(tpl().applies(f, t));
  EXPECT_EQ(schedules::templates_for(workload({4, 4, 4, DataType::u8()}), t).front()->name(),
            "dense.int8");
}

TEST(DenseInt8Asm, PairDotsOnEveryX86Level) {
  const Workload w = workload({64, 128, 64, DataType::u8(), 128, true});
  const std::string avx2 = template_assembly(tpl(), w, "x86-avx2");
  // The fallback tile: 4 rows x 2 ymm, K unrolled by 2.
  EXPECT_GE(count_instructions(avx2, "vpmaddwd", "ymm"), 16) << avx2;
  EXPECT_EQ(count_instructions(avx2, "vpmaddubsw", ""), 0) << avx2;
  const std::string avx512 = template_assembly(tpl(), w, "x86-avx512");
  // The preset has no VNNI on any build machine: multiply-add pairs, then adds.
  EXPECT_GE(count_instructions(avx512, "vpmaddwd", "zmm"), 48) << avx512;
  EXPECT_EQ(count_instructions(avx512, "vpdpwssd", ""), 0) << avx512;
  const std::string vnni = template_assembly(tpl(), w, "x86-amx");
  // 6 rows x 4 zmm per K pair (LLVM may keep the K loop rolled).
  EXPECT_GE(count_instructions(vnni, "vpdpwssd", "zmm"), 24) << vnni;
  EXPECT_EQ(count_instructions(vnni, "vpdpwssd", "rsp"), 0) << "accumulators spilled:\n" << vnni;
}

}  // namespace
}  // namespace kiln::testing
