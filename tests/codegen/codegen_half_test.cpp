// f16 and bf16: loads, conversions and stores, scalar and vector, rounded to nearest even
// as checked against independent C++ references; and arithmetic in half precision.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/ir/op.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;
using ir::Var;

// Values that exercise rounding: ties to even both ways, just above/below ties, overflow,
// subnormals, infinities, NaN, signed zero.
std::vector<float> tricky_floats(bool with_subnormals) {
  std::vector<float> v;
  for (uint32_t bits :
       {0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu, 0x7f7fffffu, 0x477fe000u, 0x477ff000u,
        0x477fefffu, 0x3f801000u, 0x3f803000u, 0x33000000u, 0x33000001u, 0x387fc000u, 0x38800000u,
        0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc12345u})
    v.push_back(std::bit_cast<float>(bits));
  if (with_subnormals)
    for (uint32_t bits : {0x00000001u, 0x00008000u, 0x00018000u, 0x007fffffu, 0x80400000u})
      v.push_back(std::bit_cast<float>(bits));
  uint32_t x = 12345;
  while (v.size() % 16 != 0 || v.size() < 512) {
    x = x * 1664525u + 1013904223u;
    float f =
        std::ldexp(static_cast<float>(x >> 8) / (1 << 24) - 0.5f, static_cast<int>(x % 40) - 20);
    v.push_back(f);
  }
  return v;
}

bool same_half(uint16_t got, uint16_t want, bool bf16) {
  // Any NaN is fine for a NaN; everything else must match bit for bit.
  auto is_nan = [&](uint16_t h) {
    return bf16 ? ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) : ((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
  };
  return is_nan(want) ? is_nan(got) : got == want;
}

// Not a preset: an x86 without F16C, so that f16 conversions take kiln's integer sequence.
Target x86_64_v2() {
  return {"x86-64-v2", "x86_64-unknown-linux-gnu", "x86-64-v2", {"+sse4.2", "-f16c", "-avx"}, 128};
}

class HalfTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    target_ = GetParam() == "x86-64-v2" ? x86_64_v2() : target_from_name(GetParam());
    if (!host_can_run(target_)) GTEST_SKIP() << "this machine cannot run " << GetParam() << " code";
  }
  // vcvtneps2bf16 flushes subnormal inputs to zero: only the integer sequence keeps them.
  bool bf16_keeps_subnormals() const {
    return !(target_.is_x86() && target_.has("avx512bf16") && target_.has("avx512vl"));
  }
  Target target_;
};

// out_h[i] = half(A[i]); back[i] = f32(H[i]); sq[i] = H[i] * H[i] + H[i] in half precision.
LoweredFunc convert_kernel(DataType half, int lanes, int64_t n) {
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer h = ir::make_buffer("H", half, {n});
  Buffer out = ir::make_buffer("OUT", half, {n});
  Buffer back = ir::make_buffer("BACK", DataType::f32(), {n});
  Buffer sq = ir::make_buffer("SQ", half, {n});
  Var i("i");
  Expr idx = lanes == 1 ? Expr(i) : ir::make_ramp(i * lanes, 1, lanes);
  auto ld = [&](const Buffer& b) { return ir::make_load(b, {idx}); };
  Expr hv = ld(h);
  ir::Stmt body = ir::make_seq({
      ir::make_store(out, ir::make_cast(half.with_lanes(lanes), ld(a)), {idx}),
      ir::make_store(back, ir::make_cast(DataType::f32(lanes), hv), {idx}),
      ir::make_store(sq, hv * hv + hv, {idx}),
  });
  std::string name = half.str() + "_x" + std::to_string(lanes);
  return {name, {a, h, out, back, sq}, ir::make_for(i, 0, n / lanes, ir::ForKind::Serial, body)};
}

void check_conversions(const Target& target, DataType half, bool keep_subnormals) {
  bool bf16 = half.is_bfloat();
  auto to_half = bf16 ? f32_to_bf16_ref : f32_to_f16_ref;
  auto from_half = bf16 ? bf16_to_f32_ref : f16_to_f32_ref;
  std::vector<float> av = tricky_floats(keep_subnormals);
  const int64_t n = static_cast<int64_t>(av.size());
  std::vector<uint16_t> hv(n);
  for (int64_t k = 0; k < n; ++k) hv[k] = static_cast<uint16_t>(k * 2654435761u >> 7);  // all kinds
  for (int lanes : {1, 8, 16}) {
    LoweredFunc f = convert_kernel(half, lanes, n);
    LoadedModule m(build({f}, target));
    ASSERT_EQ(m.init(nullptr), 0);
    std::vector<uint16_t> out(n), sq(n);
    std::vector<float> back(n);
    ASSERT_EQ(m.call(f.name, {av.data(), hv.data(), out.data(), back.data(), sq.data()}), 0);
    for (int64_t k = 0; k < n; ++k) {
      uint16_t want = to_half(av[k]);
      ASSERT_TRUE(same_half(out[k], want, bf16))
          << f.name << " " << target.name << ": " << std::hexfloat << av[k] << " (0x" << std::hex
          << std::bit_cast<uint32_t>(av[k]) << ") -> 0x" << out[k] << ", want 0x" << want;
      float wide = from_half(hv[k]);
      if (std::isnan(wide)) {
        ASSERT_TRUE(std::isnan(back[k])) << f.name << " 0x" << std::hex << hv[k];
      } else {
        ASSERT_EQ(back[k], wide) << f.name << " 0x" << std::hex << hv[k];
      }
      // Half arithmetic is done in f32 and rounded once per operation on the presets (x86
      // presets have no f16 arithmetic; no one has bf16 arithmetic).
      if (!keep_subnormals && std::fabs(wide * wide) < std::numeric_limits<float>::min()) continue;
      float p = from_half(to_half(wide * wide));
      uint16_t want_sq = to_half(p + wide);
      if (!keep_subnormals && std::fabs(p + wide) < std::numeric_limits<float>::min()) continue;
      // A CPU with native f16 arithmetic (AVX512-FP16 on "host") may contract x*x+x into one
      // f16 FMA, rounded once.
      uint16_t want_fused = to_half(std::fma(wide, wide, wide));
      ASSERT_TRUE(same_half(sq[k], want_sq, bf16) || same_half(sq[k], want_fused, bf16)) << f.name << " sq of 0x" << std::hex << hv[k]
                                                   << " got 0x" << sq[k] << " want 0x" << want_sq;
    }
  }
}

TEST_P(HalfTest, Bf16ConvertAndArithmetic) {
  check_conversions(target_, DataType::bf16(), bf16_keeps_subnormals());
}

TEST_P(HalfTest, F16ConvertAndArithmetic) {
  check_conversions(target_, DataType::f16(), true);
}

TEST(HalfReference, ReferencesAgreeWithKnownValues) {
  EXPECT_EQ(f32_to_bf16_ref(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_ref(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie to even
  EXPECT_EQ(f32_to_bf16_ref(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_EQ(f32_to_f16_ref(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_ref(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_ref(65520.0f), 0x7c00);  // the tie above max rounds to infinity
  EXPECT_EQ(f32_to_f16_ref(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_ref(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16_ref(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (zero)
  EXPECT_EQ(f16_to_f32_ref(0x3555), 0x1.554p-2f);
}

// f64 -> f16/bf16 rounds once (via round-to-odd), not twice through f32.
TEST_P(HalfTest, F64ToHalfRoundsOnce) {
  const int64_t n = 4;
  Buffer a = ir::make_buffer("A", DataType::f64(), {n});
  Buffer h = ir::make_buffer("H", DataType::f16(), {n});
  Buffer b = ir::make_buffer("B", DataType::bf16(), {n});
  Var i("i");
  ir::Stmt body = ir::make_seq(
      {ir::make_store(h, ir::make_cast(DataType::f16(), ir::make_load(a, {i})), {i}),
       ir::make_store(b, ir::make_cast(DataType::bf16(), ir::make_load(a, {i})), {i})});
  LoadedModule m(
      build({LoweredFunc{"f64_half", {a, h, b}, ir::make_for(i, 0, n, ir::ForKind::Serial, body)}},
            target_));
  // 1 + 2^-11 + 2^-40: just above the f16 tie; rounding to f32 first would make it a tie
  // and round down to even.
  std::vector<double> av{1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                         1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), -3.0, 1e300};
  std::vector<uint16_t> hv(n), bv(n);
  ASSERT_EQ(m.call("f64_half", {av.data(), hv.data(), bv.data()}), 0);
  EXPECT_EQ(hv[0], 0x3c01);
  EXPECT_EQ(bv[1], 0x3f81);
  EXPECT_EQ(hv[2], 0xc200);
  EXPECT_EQ(bv[2], 0xc040);
  EXPECT_EQ(hv[3], 0x7c00);
  EXPECT_EQ(bv[3], 0x7f80);
}

INSTANTIATE_TEST_SUITE_P(Targets, HalfTest,
                         ::testing::Values("host", "x86-avx2", "x86-avx512", "x86-64-v2",
                                           "cooperlake"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace kiln::codegen::testing
