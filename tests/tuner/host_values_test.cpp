// tuner/host_values.h: the comparison the tests, `kiln inspect --run` and the tuner share.
#include "tuner/host_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln::tuner {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Compare, WithinTolerance) {
  Comparison c = compare({1.0f, 2.0f, 100.0f}, {1.00001f, 2.0f, 100.001f}, 1e-4);
  EXPECT_TRUE(c.close) << c.message();
  EXPECT_EQ(c.mismatches, 0u);
}

TEST(Compare, FirstMismatchAndCount) {
  Comparison c = compare({1.0f, 2.5f, 3.0f, 4.5f}, {1.0f, 2.0f, 3.0f, 4.0f}, 1e-4);
  EXPECT_FALSE(c.close);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.first, 1u);
  // relative to max(1, |want|, rms(want)): rms = sqrt(30 / 4) ≈ 2.74 beats |2| at index 1
  EXPECT_DOUBLE_EQ(c.max_error, 0.5 / std::sqrt(30.0 / 4.0));
}

TEST(Compare, NaNMatchesNaN) {
  Comparison c = compare({kNaN, 1.0f, -kNaN}, {kNaN, 1.0f, kNaN}, 1e-4);
  EXPECT_TRUE(c.close) << c.message();
  EXPECT_EQ(c.max_error, 0.0);
}

TEST(Compare, EqualInfinitiesMatch) {
  Comparison c = compare({kInf, -kInf, 0.5f}, {kInf, -kInf, 0.5f}, 1e-4);
  EXPECT_TRUE(c.close) << c.message();
}

TEST(Compare, NaNOrInfinityAgainstAnythingElseIsAMismatch) {
  for (auto [got, want] : std::vector<std::pair<float, float>>{
           {kNaN, 1.0f}, {1.0f, kNaN}, {kInf, -kInf}, {kInf, 1.0f}, {1.0f, kInf}, {kNaN, kInf}}) {
    Comparison c = compare({got}, {want}, 1e-4);
    EXPECT_FALSE(c.close) << got << " vs " << want;
    EXPECT_EQ(c.mismatches, 1u);
    EXPECT_TRUE(std::isinf(c.max_error)) << got << " vs " << want << ": " << c.max_error;
  }
}

TEST(Compare, NearZeroElementsAreJudgedAgainstTheOutputsScale) {
  // A long reduction that cancels to ~0 keeps the absolute rounding error of its large
  // partial sums: 3e-3 off on an output whose RMS is 30 is 1e-4 of the scale.
  Values want = {30.0f, -30.0f, 30.0f, 0.01f};
  Values got = want;
  got[3] += 2.5e-3f;
  EXPECT_TRUE(compare(got, want, 1e-4).close);
  // ...but an element off by the order of the values is still wrong.
  got[3] = 3.0f;
  EXPECT_FALSE(compare(got, want, 1e-4).close);
  // A single-scale output keeps the plain relative check.
  EXPECT_FALSE(compare({1.001f}, {1.0f}, 1e-4).close);
}

TEST(Compare, SizeMismatch) {
  Comparison c = compare({1.0f, 2.0f}, {1.0f}, 1e-4);
  EXPECT_FALSE(c.close);
  EXPECT_TRUE(std::isinf(c.max_error));
}

}  // namespace
}  // namespace kiln::tuner
