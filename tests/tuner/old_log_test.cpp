// Logs written before the tuning spaces were widened: their configs lack the knobs added
// since (dense.packed's kc and mc_tiles; conv2d.nchwc's unroll_kh, k_unroll, reduce_order;
// conv2d.depthwise's unroll_kh and oc_inner). Each such knob has a legacy default, the value
// that reproduces the old schedule, so an old record maps into today's space for every
// reader (apply-history-best, resume, transfer); a config with an unknown knob or a value
// outside the space is still reported and skipped. data/before_wide_spaces.jsonl holds
// three old-format records and two bad ones.
#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "tests/tuner/records_test_util.h"
#include "tuner/history_best.h"
#include "tuner/task_tuner.h"

namespace kiln::tuner {
namespace {

const std::string kOldLog = std::string(KILN_TUNER_TEST_DATA) + "/before_wide_spaces.jsonl";

schedules::ConfigSpace space_of(const TuningRecord& r) {
  return schedules::template_named(r.template_name).space(r.workload, r.target);
}

TEST(OldLog, ConfigsTakeTheLegacyDefaultsOfKnobsAddedSince) {
  LoadedRecords loaded = load_records({kOldLog});
  ASSERT_EQ(loaded.records.size(), 3u);
  const schedules::Config& dense = loaded.records[0].config;
  EXPECT_EQ(dense["kc"], 0);  // no K blocking, as before kc existed
  EXPECT_EQ(dense["mc_tiles"], 1);
  EXPECT_EQ(dense["k_unroll"], 2);  // what the log says is kept
  const schedules::Config& conv = loaded.records[1].config;
  EXPECT_EQ(loaded.records[1].template_name, "conv2d.nchwc");
  EXPECT_EQ(conv["unroll_kh"], 0);
  EXPECT_EQ(conv["k_unroll"], 1);
  EXPECT_EQ(conv["reduce_order"], 0);
  EXPECT_EQ(conv["oc_inner"], 1);
  const schedules::Config& dw = loaded.records[2].config;
  EXPECT_EQ(dw["unroll_kh"], 0);
  EXPECT_EQ(dw["oc_inner"], 0);
  for (const TuningRecord& r : loaded.records) {
    EXPECT_TRUE(space_of(r).contains(r.config)) << r.config.to_json();
    // And the template builds it.
    EXPECT_NO_THROW(schedules::template_named(r.template_name)
                        .instantiate(r.workload, r.target, r.config));
  }
}

TEST(OldLog, UnknownKnobsAndValuesOutsideTheSpaceAreStillReported) {
  LoadedRecords loaded = load_records({kOldLog});
  ASSERT_EQ(loaded.problems.size(), 2u);
  EXPECT_EQ(loaded.problems[0].line, 4u);
  EXPECT_NE(loaded.problems[0].reason.find("knob 'tile_z' is not in it"), std::string::npos)
      << loaded.problems[0].reason;
  EXPECT_EQ(loaded.problems[1].line, 5u);
  EXPECT_NE(loaded.problems[1].reason.find("knob 'kc' = 48 is not one of its choices"),
            std::string::npos)
      << loaded.problems[1].reason;
}

TEST(OldLog, ApplyHistoryBestDispatchesTheMappedConfig) {
  HistoryBest best = HistoryBest::from_logs({kOldLog});
  LoadedRecords loaded = load_records({kOldLog});
  const TuningRecord& dense = loaded.records[0];
  Dispatch d = best.dispatch(dense.workload, dense.target);
  EXPECT_FALSE(d.untuned);
  EXPECT_EQ(d.config, dense.config);
  EXPECT_TRUE(d.config.has("kc"));
}

TEST(OldLog, AResumedTunerCountsAnOldRecordAsMeasured) {
  // Handed over as read (without the loader's mapping): the tuner maps it itself.
  LoadedRecords loaded = load_records({kOldLog});
  TuningRecord old = loaded.records[0];
  old.config = schedules::Config({{"k_unroll", 2}, {"mr", 4}, {"nr_vecs", 2},
                                  {"panels_outer", 0}, {"parallel", 0}});
  TuneTask task{&schedules::template_named(old.template_name), old.workload, old.target, {}, {}};
  TuneOptions o;
  o.search = "random";
  TaskTuner tuner(task, o, {old});
  ASSERT_TRUE(tuner.best());
  EXPECT_EQ(tuner.best()->config, loaded.records[0].config);
  EXPECT_GT(tuner.status().best_gflops, 0);
}

}  // namespace
}  // namespace kiln::tuner
