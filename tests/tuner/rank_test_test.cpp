// The rank test that decides whether a tuned config beat the untuned one beyond noise:
// exact p-values for small samples, the normal approximation with ties, and the verdicts.
#include "tuner/rank_test.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::tuner {
namespace {

TEST(RankTest, ExactPValuesOfSmallSamples) {
  // Every time of a below every time of b: one ordering of C(10, 5) = 252.
  SpeedComparison c = compare_speed({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_NEAR(c.p_value, 1.0 / 252, 1e-12);
  EXPECT_TRUE(c.significant());
  EXPECT_DOUBLE_EQ(c.speedup, 8.0 / 3);
  // The other way round: certainly not faster.
  EXPECT_NEAR(compare_speed({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).p_value, 1.0, 1e-12);
  // Three against three can never show 95% confidence: the best ordering has p = 1/20.
  EXPECT_NEAR(compare_speed({1, 2, 3}, {4, 5, 6}).p_value, 0.05, 1e-12);
  EXPECT_FALSE(compare_speed({1, 2, 3}, {4, 5, 6}).significant());
  // One swap from the extreme: U = 24 of 25; P(U >= 24) = 2/252. Two: U = 23, 4/252.
  EXPECT_NEAR(compare_speed({1, 2, 3, 4, 6}, {5, 7, 8, 9, 10}).p_value, 2.0 / 252, 1e-12);
  EXPECT_NEAR(compare_speed({1, 2, 3, 4, 7}, {5, 6, 8, 9, 10}).p_value, 4.0 / 252, 1e-12);
}

TEST(RankTest, TiesUseTheNormalApproximation) {
  // Equal times everywhere: no evidence.
  EXPECT_NEAR(compare_speed({1, 1, 1, 1}, {1, 1, 1, 1}).p_value, 1.0, 1e-12);
  // Mostly separated with a tie between the groups: still a clear gain.
  SpeedComparison c = compare_speed({1, 1, 2, 2, 3, 3, 4, 4, 5}, {5, 6, 6, 7, 7, 8, 8, 9, 9});
  EXPECT_LT(c.p_value, 0.001);
  EXPECT_TRUE(c.significant());
}

TEST(RankTest, SamplesOfOneDistributionAreWithinNoise) {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> timing(std::log(1e-4), 0.05);
  int significant = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> a(9), b(9);
    for (double& x : a) x = timing(rng);
    for (double& x : b) x = timing(rng);
    significant += compare_speed(a, b).significant();
  }
  // At 95% confidence about one in twenty claims a gain by luck, never many more.
  EXPECT_LE(significant, 20);
  EXPECT_GE(significant, 2);
}

TEST(RankTest, VerdictsSayWithinNoiseOrHowMuchFaster) {
  EXPECT_EQ(compare_speed({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).str("the untuned config"),
            "2.67x faster than the untuned config (p=0.004, 5 vs 5 times)");
  EXPECT_EQ(compare_speed({1, 2, 3}, {4, 5, 6}).str("the untuned config"),
            "within noise of the untuned config (2.50x, p=0.05, 3 vs 3 times)");
  EXPECT_EQ(compare_speed({}, {1}).p_value, 1.0);
}

}  // namespace
}  // namespace kiln::tuner
