// Samples for the cost model from other tasks' records (--transfer, and a network tune's
// sharing between tasks of one template): one group per task, the template's correct records
// only, the fastest `per_task` of each, throughputs normalised to each task's best, and
// features computed once per record when a cache is given.
#include <gtest/gtest.h>

#include <algorithm>

#include "schedules/dense/dense.h"
#include "tuner/transfer.h"

namespace kiln::tuner {
namespace {

TuningRecord record(const schedules::OpTemplate& tpl, const schedules::Workload& w, uint64_t config,
                    double cost, MeasureErrorKind error = MeasureErrorKind::Ok) {
  TuningRecord r;
  r.target = target_from_name("x86-avx2");
  r.template_name = tpl.name();
  r.workload = w;
  r.config = tpl.space(w, r.target).at(config);
  r.result.costs = {cost};
  r.result.error = error;
  r.flops = 1e6;
  return r;
}

std::vector<TuningRecord> two_dense_tasks_and_noise() {
  const schedules::OpTemplate& dense = schedules::dense_packed_template();
  const schedules::Workload a{"dense", {{"M", 8}, {"N", 16}, {"K", 8}}, ir::DataType::f32(), {}};
  const schedules::Workload b{"dense", {{"M", 8}, {"N", 32}, {"K", 8}}, ir::DataType::f32(), {}};
  std::vector<TuningRecord> r;
  for (uint64_t i = 0; i < 3; ++i) r.push_back(record(dense, a, i, 1e-3 * (i + 1)));
  for (uint64_t i = 0; i < 4; ++i) r.push_back(record(dense, b, i, 2e-3 * (i + 1)));
  r.push_back(record(dense, b, 5, 1e-4, MeasureErrorKind::WrongResult));  // never taught
  TuningRecord other = record(dense, a, 4, 1e-6);
  other.template_name = "dense.other";  // another template's record: not this one's to learn
  r.push_back(other);
  return r;
}

TEST(TransferSamples, OneGroupPerTaskOfTheTemplateNormalisedToItsBest) {
  PriorSamples p = transfer_samples(two_dense_tasks_and_noise(), schedules::dense_packed_template(), "knob");
  std::vector<uint32_t> groups = p.groups;
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<uint32_t>{3, 4}));
  ASSERT_EQ(p.x.size(), 7u);
  ASSERT_EQ(p.y.size(), 7u);
  EXPECT_EQ(std::count(p.y.begin(), p.y.end(), 1.0f), 2);  // each task's best
  for (float y : p.y) EXPECT_GT(y, 0.2f);
}

TEST(TransferSamples, TheFastestPerTask) {
  PriorSamples p = transfer_samples(two_dense_tasks_and_noise(), schedules::dense_packed_template(), "knob", 2);
  EXPECT_EQ(p.groups, (std::vector<uint32_t>{2, 2}));
  for (float y : p.y) EXPECT_GE(y, 0.5f);  // the best and the second best of each
}

TEST(TransferSamples, ACacheComputesEachRecordsFeaturesOnce) {
  FeatureCache cache;
  const auto records = two_dense_tasks_and_noise();
  const auto& dense = schedules::dense_packed_template();
  PriorSamples first = transfer_samples(records, dense, "ir", 256, &cache);
  EXPECT_EQ(cache.size(), 7u);
  // A stale entry stands in for the features: the second call reads the cache, not the IR.
  for (auto& [key, x] : cache) x.assign(x.size(), 42.0f);
  PriorSamples second = transfer_samples(records, dense, "ir", 256, &cache);
  ASSERT_EQ(second.x.size(), first.x.size());
  for (const auto& x : second.x) EXPECT_EQ(x.front(), 42.0f);
  EXPECT_EQ(second.y, first.y);
}

}  // namespace
}  // namespace kiln::tuner
