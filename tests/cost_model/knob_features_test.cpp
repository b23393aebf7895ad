// cost_model/knob_features.h: a config's knob values and choice indices, padded to a fixed length.
#include "cost_model/knob_features.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"

namespace kiln::cost_model {
namespace {

schedules::ConfigSpace small_space() {
  schedules::ConfigSpace s;
  s.define_knob("mr", {1, 2, 4, 6});
  s.define_knob("unroll", {0, 1});
  return s;
}

TEST(KnobFeatures, ValuesThenChoiceIndicesPaddedWithMinusOne) {
  std::vector<float> f =
      knob_features(small_space(), schedules::Config({{"mr", 6}, {"unroll", 0}}));
  ASSERT_EQ(f.size(), knob_feature_count());
  EXPECT_EQ(f[0], 6);  // mr's value
  EXPECT_EQ(f[1], 3);  // its index among 1, 2, 4, 6
  EXPECT_EQ(f[2], 0);
  EXPECT_EQ(f[3], 0);
  for (size_t i = 4; i < f.size(); ++i) EXPECT_EQ(f[i], -1) << i;
  EXPECT_EQ(knob_feature_names().size(), knob_feature_count());
  EXPECT_EQ(knob_feature_names()[3], "K1.choice");
}

TEST(KnobFeatures, BadConfigsAreUserErrors) {
  EXPECT_THROW(knob_features(small_space(), schedules::Config({{"mr", 6}})), UserError);
  EXPECT_THROW(knob_features(small_space(), schedules::Config({{"mr", 5}, {"unroll", 0}})),
               UserError);
}

TEST(KnobFeatures, KnobsPastTheLimitAreDropped) {
  schedules::ConfigSpace s;
  schedules::Config c;
  for (int k = 0; k < kMaxKnobs + 3; ++k) {
    std::string name = std::to_string(k);
    name.insert(name.begin(), 'k');
    s.define_knob(name, {10, 20});
    c.set(name, 20);
  }
  std::vector<float> f = knob_features(s, c);
  ASSERT_EQ(f.size(), knob_feature_count());
  EXPECT_EQ(f.back(), 1);
}

}  // namespace
}  // namespace kiln::cost_model
