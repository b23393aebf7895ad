// The one f16/bf16 codec against the compiler's own _Float16 conversions (round to nearest
// even in hardware or libgcc) over every half value and a sweep of f32 values, plus the
// bf16 rounding rule and NaN handling.
#include "kiln/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kiln {
namespace {

TEST(HalfCodec, EveryF16DecodesExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float want = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(h)));
    float got = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << std::hex << h;
    }
  }
}

TEST(HalfCodec, F32ToF16RoundsToNearestEven) {
  std::mt19937 rng(5);
  auto check = [](float f) {
    uint16_t want = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    uint16_t got = f32_to_f16(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(got)));
    } else {
      ASSERT_EQ(got, want) << std::hexfloat << f;
    }
  };
  // Every f32 exponent that matters, with random mantissas, plus the exact halfway points.
  for (int e = -30; e <= 18; ++e)
    for (int i = 0; i < 2000; ++i) {
      float m = 1.0f + static_cast<float>(rng() & 0x7fffff) / 0x800000;
      check(std::ldexp(m, e));
      check(-std::ldexp(m, e));
    }
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // halfway between neighbouring halves
    float lo = f16_to_f32(static_cast<uint16_t>(h)), hi = f16_to_f32(static_cast<uint16_t>(h + 1));
    check((lo + hi) / 2);
  }
  check(65520.0f);  // rounds up to infinity
  check(std::numeric_limits<float>::infinity());
  check(std::numeric_limits<float>::quiet_NaN());
  check(0.0f);
  check(-0.0f);
}

TEST(HalfCodec, Bf16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, to even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, to even (up)
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::bit_cast<float>(0x7f800001u)))));
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
}

}  // namespace
}  // namespace kiln
