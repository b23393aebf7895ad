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
  EXPECT_DOUBLE_EQ(c.max_error, 0.5 / 2.0);  // relative to max(1, |want|)
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

TEST(Compare, SizeMismatch) {
  Comparison c = compare({1.0f, 2.0f}, {1.0f}, 1e-4);
  EXPECT_FALSE(c.close);
  EXPECT_TRUE(std::isinf(c.max_error));
}

}  // namespace
}  // namespace kiln::tuner
