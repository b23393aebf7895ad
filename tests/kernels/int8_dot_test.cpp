// conv2d.int8.dot and dense.int8.dot (the byte dot templates of schedules/conv2d/int8.h and
// schedules/dense/int8.h) against their exact integer references: u8 and i8 data with zero
// points across their whole range (the data moves by 128 where the instruction reads the
// other type, and the zero-point term the packed weights carry must follow it), int8 weights,
// int32 bias, requantized output or the int32 sum. On three instructions: `vpdpbusd zmm`
// (cascadelake, AVX512-VNNI) and `vpdpbusd ymm` (alderlake, AVX-VNNI) natively where this
// CPU has them, `sdot` (cortex-a76, dotprod) and `usdot` (neoverse-v1, i8mm: u8 data read as
// it is) under qemu.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/conv2d/int8.h"
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

const OpTemplate& conv_tpl() {
  return schedules::conv2d_int8_dot_template();
}
const OpTemplate& dense_tpl() {
  return schedules::dense_int8_dot_template();
}

Workload conv(const Int8Conv& c) {
  return int8_conv(c);
}

Workload dense(int64_t m, int64_t n, int64_t k, DataType t, int64_t a_zero, bool bias,
               bool requantize = true, int64_t y_zero = 0) {
  Workload w{"dense", {{"M", m}, {"N", n}, {"K", k}}, t, {}};
  w.params["a_zero"] = a_zero;
  w.params["requantize"] = requantize ? 1 : 0;
  if (requantize) w.params["y_zero"] = y_zero;
  if (bias) w.epilogue.push_back("bias");
  return w;
}

const DataType u8 = DataType::u8(), i8 = DataType::i8();

std::vector<Workload> convs() {
  // The int32 sum is compared through f32: exact below 2^24, so C*KH*KW <= 500 where
  // requantize is 0.
  return {
      conv({16, 14, 32, 3, 1, 1, 1, u8, 128}),                       // ResNet's 3x3
      conv({32, 9, 24, 1, 1, 0, 1, u8, 3}),                          // a 1x1, read in place on x86
      conv({3, 17, 16, 3, 2, 1, 1, u8, 255}),                        // a stem: C = 3 in one quad
      conv({10, 8, 20, 3, 1, 2, 2, i8, -128, false}),                // dilated, no bias, i8 data
      conv({24, 7, 40, 1, 2, 0, 1, i8, 127, true, true, -20, -20}),  // fused Relu on i8
      conv({13, 6, 11, 3, 1, 1, 1, u8, 0, true, false}),             // ConvInteger's int32
      conv({72, 5, 48, 3, 1, 1, 1, u8, 37}),                         // several channel blocks
  };
}

std::vector<Workload> denses() {
  return {
      dense(37, 53, 30, u8, 128, true),      dense(1, 100, 64, u8, 255, true),
      dense(64, 64, 64, i8, -128, false),    dense(3, 5, 1, i8, 5, false, true, -3),
      dense(19, 40, 33, u8, 0, true, false), dense(5, 24, 300, u8, 1, true, true, 100),
  };
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  for (const Workload& w : convs()) {
    for (int cfg = -1; cfg < 2; ++cfg) out.push_back({w, "cascadelake", cfg, &conv_tpl()});
    out.push_back({w, "alderlake", -1, &conv_tpl()});
  }
  for (const Workload& w : denses()) {
    for (int cfg = -1; cfg < 2; ++cfg) out.push_back({w, "cascadelake", cfg, &dense_tpl()});
    out.push_back({w, "alderlake", -1, &dense_tpl()});
  }
  // Under qemu: fewer, each run costs a process start. u8 data moves to i8 for sdot.
  for (size_t i : {0, 2, 3, 5}) out.push_back({convs()[i], "cortex-a76", -1, &conv_tpl()});
  out.push_back({convs()[1], "neoverse-n1", 1, &conv_tpl()});
  for (size_t i : {0, 2, 4}) out.push_back({denses()[i], "cortex-a76", -1, &dense_tpl()});
  // usdot reads u8 data as it is, and i8 data moves to u8 by 128.
  for (size_t i : {0, 1, 3}) out.push_back({convs()[i], "neoverse-v1", -1, &conv_tpl()});
  for (size_t i : {0, 2}) out.push_back({denses()[i], "neoverse-v1", -1, &dense_tpl()});
  return out;
}

class Int8DotTest : public Int8TemplateTest {};

TEST_P(Int8DotTest, MatchesExactReference) {
  check_case();
}

INSTANTIATE_TEST_SUITE_P(Int8Dot, Int8DotTest, ::testing::ValuesIn(cases()), template_case_name);

// Every value of every knob, on layers no block divides.
TEST(Int8DotSpace, EveryConvKnobValue) {
  const Workload w = conv({10, 9, 20, 3, 1, 1, 1, u8, 90});
  const Target t = target_from_name("cascadelake");
  for (const Config& cfg :
       knob_sweep(conv_tpl(), w, t,
                  {"ic_bn", "oc_bn", "reg_n", "unroll_kw", "k_unroll", "oc_inner", "parallel"})) {
    const std::string skip = check_int8(conv_tpl(), w, "cascadelake", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Int8DotSpace, EveryDenseKnobValue) {
  const Workload w = dense(11, 45, 13, u8, 77, true);
  const Target t = target_from_name("cascadelake");
  for (const Config& cfg :
       knob_sweep(dense_tpl(), w, t, {"mr", "nr_vecs", "k_unroll", "panels_outer", "parallel"})) {
    const std::string skip = check_int8(dense_tpl(), w, "cascadelake", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

// All-extreme operands: every lane's quad is 4 x 255 x 127 (or x -128), with the zero point
// at each end of its type, on each instruction: the int32 sums and the zero-point term must
// be exact.
TEST(Int8DotExtremes, ExactAtTheEndsOfEveryRange) {
  for (const char* target : {"cascadelake", "alderlake", "cortex-a76", "neoverse-v1"})
    for (float weight : {127.0f, -128.0f})
      for (int64_t zero : {0, 255}) {
        SCOPED_TRACE(std::string(target) + " weight " + std::to_string(weight) + " zero " +
                     std::to_string(zero));
        const Workload w = dense(4, 16, 64, u8, zero, false, false);
        const Target t = target_from_name(target);
        const std::string skip =
            check_int8(dense_tpl(), w, target, dense_tpl().fallback(w, t),
                       [weight](const KernelArg& a, Values& v) {
                         std::fill(v.begin(), v.end(), a.logical.name == "A" ? 255.0f : weight);
                       });
        if (!skip.empty()) std::printf("skipped on %s: %s\n", target, skip.c_str());
      }
}

TEST(Int8DotChoice, TheDefaultWhereTheTargetHasAByteDot) {
  const Workload c = conv({16, 8, 16, 3, 1, 1, 1, u8, 3});
  const Workload d = dense(4, 16, 16, u8, 3, false);
  for (const char* name : {"cascadelake", "znver4", "alderlake", "cortex-a76", "neoverse-v1"}) {
    const Target t = target_from_name(name);
    EXPECT_EQ(schedules::templates_for(c, t).front()->name(), "conv2d.int8.dot") << name;
    EXPECT_EQ(schedules::templates_for(d, t).front()->name(), "dense.int8.dot") << name;
  }
  for (const char* name : {"haswell", "skylake-avx512", "cortex-a72"}) {
    const Target t = target_from_name(name);
    EXPECT_FALSE(conv_tpl().applies(c, t)) << name;
    EXPECT_FALSE(dense_tpl().applies(d, t)) << name;
    EXPECT_THROW(conv_tpl().instantiate(c, t, conv_tpl().fallback(c, target_from_name("znver4"))),
                 UserError)
        << name;
  }
  Workload grouped = c;
  grouped.params["groups"] = 4;
  EXPECT_FALSE(conv_tpl().applies(grouped, target_from_name("cascadelake")));
}

TEST(Int8DotAsm, ByteDotsOnEveryTarget) {
  const Workload c = conv({64, 14, 64, 3, 1, 1, 1, u8, 128});
  const std::string zmm = template_assembly(conv_tpl(), c, "cascadelake");
  EXPECT_GE(count_instructions(zmm, "vpdpbusd", "zmm"), 24) << zmm;  // 2 zmm x 12 pixels
  EXPECT_EQ(count_instructions(zmm, "vpdpbusd", "rsp"), 0) << "accumulators spilled:\n" << zmm;
  const std::string ymm = template_assembly(conv_tpl(), c, "alderlake");
  EXPECT_GE(count_instructions(ymm, "vpdpbusd", "ymm"), 12) << ymm;  // 2 ymm x 6 pixels
  const std::string arm = template_assembly(conv_tpl(), c, "cortex-a76");
  EXPECT_GE(count_instructions(arm, "sdot", ".4s"), 24) << arm;  // 4 q x 6 pixels
  EXPECT_EQ(count_instructions(arm, "usdot", ".4s"), 0) << arm;
  // A pixel's neighbouring quads in one load, each SDOT taking its quad as a lane (v.4b[i],
  // lane_broadcasts.h) rather than an `ld1r` or `dup` of it (a lone quad of a remainder may
  // keep one).
  EXPECT_GE(count_instructions(arm, "sdot", ".4b["), 24) << arm;
  EXPECT_LE(count_instructions(arm, "ld1r", ".4s") + count_instructions(arm, "dup", ".4s"), 2)
      << arm;
  const std::string i8mm = template_assembly(conv_tpl(), c, "neoverse-v1");
  // u8 by s8: USDOT, or by element SUDOT (s8 by a lane of u8: the same products).
  EXPECT_GE(count_instructions(i8mm, "usdot", ".4s") + count_instructions(i8mm, "sudot", ".4s"), 24)
      << i8mm;
  EXPECT_EQ(count_instructions(i8mm, "sdot", ".4s"), 0) << i8mm;
  const Workload d = dense(64, 128, 64, u8, 128, true);
  const std::string dz = template_assembly(dense_tpl(), d, "cascadelake");
  EXPECT_GE(count_instructions(dz, "vpdpbusd", "zmm"), 24) << dz;  // 6 rows x 4 zmm
  EXPECT_EQ(count_instructions(dz, "vpdpbusd", "rsp"), 0) << "accumulators spilled:\n" << dz;
}

}  // namespace
}  // namespace kiln::testing
