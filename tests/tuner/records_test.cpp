// Tuning records: the JSON line form, appending with a torn-tail repair, reading with a
// problem list for every kind of bad line, and the resume set.
#include "tuner/records.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "compiler/base/error.h"
#include "tests/tuner/records_test_util.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;
using testing::lines_of;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

TEST(MeasureResult, ErrorKindNamesRoundTrip) {
  std::set<std::string> names;
  for (MeasureErrorKind k : all_measure_error_kinds()) {
    std::string name = measure_error_name(k);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(measure_error_from_name(name), k);
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(std::string(measure_error_name(MeasureErrorKind::WrongResult)), "wrong_result");
  EXPECT_FALSE(measure_error_from_name("segfault"));
}

TEST(MeasureResult, CostsMedianAndSpread) {
  MeasureResult r;
  r.costs = {2.0, 1.0, 4.0, 3.0};
  EXPECT_DOUBLE_EQ(r.cost(), 1.0);  // the fastest repeat, not the mean (2.5)
  EXPECT_DOUBLE_EQ(r.median_cost(), 2.5);
  EXPECT_DOUBLE_EQ(r.spread(), (4.0 - 1.0) / 2.5);
  r.costs = {1.0};
  EXPECT_DOUBLE_EQ(r.spread(), 0);
  // A failed measurement never compares better than a working one, whatever its costs.
  r.error = MeasureErrorKind::WrongResult;
  EXPECT_TRUE(std::isinf(r.cost()));
  r.error = MeasureErrorKind::Ok;
  r.costs.clear();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(std::isinf(r.cost()));
}

TEST(Records, RoundTripThroughALog) {
  TempDir dir;
  DenseTask task;
  std::vector<TuningRecord> batch = {task.record(0, {1e-5, 1.1e-5, 0.9e-5}),
                                     task.record(7, {}, MeasureErrorKind::CompileError),
                                     task.record(9, {3e-5}, MeasureErrorKind::WrongResult)};
  // Messages carry compiler output: quotes, newlines and bytes that are not UTF-8.
  batch[1].result.message = "error: \"x\"\nline 2 \xff\xfe end";
  batch[2].workload.epilogue = {"bias", "relu"};
  batch[2].workload.dtype = ir::DataType::bf16();
  batch[2].workload.run_time = {"M"};  // a kernel tuned at M = 64 that takes any M to 512
  batch[2].workload.run_time_max = {{"M", 512}};
  {
    RecordWriter writer(dir.file("log.jsonl"));
    EXPECT_FALSE(writer.repaired_tail());
    writer.append({batch[0], batch[1]});
    writer.append({batch[2]});
  }
  EXPECT_EQ(lines_of(read_text(dir.file("log.jsonl"))).size(), 3u);

  LoadOptions unchecked;
  unchecked.check_templates = false;  // dense.packed has no bf16: only the text form is tested
  LoadedRecords loaded = load_records({dir.file("log.jsonl")}, unchecked);
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
  ASSERT_EQ(loaded.records.size(), 3u);
  const TuningRecord& a = loaded.records[0];
  EXPECT_EQ(target_key(a.target), target_key(task.target));
  EXPECT_EQ(a.template_name, "dense.packed");
  EXPECT_EQ(a.workload.str(), task.workload.str());
  EXPECT_EQ(a.config, batch[0].config);
  EXPECT_EQ(a.result.costs, batch[0].result.costs);  // doubles survive exactly
  EXPECT_EQ(a.result.timestamp, batch[0].result.timestamp);
  EXPECT_EQ(a.result.device_key, "local");
  EXPECT_EQ(a.flops, batch[0].flops);
  EXPECT_NEAR(a.gflops(), 2.0 * 64 * 64 * 64 / 0.9e-5 / 1e9, 1e-6);  // by the fastest repeat
  EXPECT_EQ(loaded.records[1].result.error, MeasureErrorKind::CompileError);
  EXPECT_EQ(loaded.records[1].result.message, "error: \"x\"\nline 2 \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(loaded.records[2].workload.str(),
            "dense K=64 M=64 N=64 bf16 +bias +relu run-time M<=512");
  EXPECT_TRUE(loaded.records[0].workload.run_time.empty());
  EXPECT_EQ(loaded.records[2].gflops(), 0);
  for (size_t i = 0; i < 3; ++i)
    if (i != 1) {
      EXPECT_EQ(record_to_json(loaded.records[i]), record_to_json(batch[i]));
    }
}

TEST(Records, TornLastLineIsReportedCutAndAppendStartsClean) {
  TempDir dir;
  DenseTask task;
  std::string log = dir.file("log.jsonl");
  RecordWriter(log).append({task.record(0, {1e-5}), task.record(1, {2e-5})});
  // What a SIGKILL in the middle of a write leaves: half a line, no newline.
  std::string third = record_to_json(task.record(2, {3e-5}));
  write_text(log, third.substr(0, third.size() / 2), std::ios::app);

  LoadedRecords before = load_records({log});
  EXPECT_EQ(before.records.size(), 2u);
  ASSERT_EQ(before.problems.size(), 1u);
  EXPECT_EQ(before.problems[0].line, 3u);
  EXPECT_EQ(before.problems[0].file, log);
  EXPECT_NE(before.problems[0].reason.find("torn last line"), std::string::npos)
      << before.problems[0].reason;

  RecordWriter writer(log);
  ASSERT_TRUE(writer.repaired_tail());
  EXPECT_EQ(writer.repaired_tail()->line, 3u);
  EXPECT_NE(writer.repaired_tail()->reason.find("cut off"), std::string::npos);
  writer.append({task.record(3, {4e-5})});

  LoadedRecords after = load_records({log});
  EXPECT_TRUE(after.problems.empty()) << after.problems[0].str();
  ASSERT_EQ(after.records.size(), 3u);
  EXPECT_EQ(after.records[2].config, task.space().at(3));
  EXPECT_EQ(read_text(log).back(), '\n');
}

TEST(Records, WholeLastLineWithoutNewlineIsKept) {
  TempDir dir;
  DenseTask task;
  std::string log = dir.file("log.jsonl");
  write_text(log, record_to_json(task.record(0, {1e-5})));  // written by hand, no newline
  EXPECT_EQ(load_records({log}).records.size(), 1u);
  RecordWriter writer(log);
  ASSERT_TRUE(writer.repaired_tail());
  EXPECT_NE(writer.repaired_tail()->reason.find("added one"), std::string::npos);
  writer.append({task.record(1, {2e-5})});
  LoadedRecords loaded = load_records({log});
  EXPECT_TRUE(loaded.problems.empty());
  EXPECT_EQ(loaded.records.size(), 2u);
}

TEST(Records, EachKindOfBadLineIsReportedWithItsLineNumber) {
  TempDir dir;
  DenseTask task;
  auto with = [&](const std::function<void(TuningRecord&)>& edit) {
    TuningRecord r = task.record(0, {1e-5});
    edit(r);
    return record_to_json(r);
  };
  std::string good = record_to_json(task.record(1, {1e-5}));
  auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(good);
    edit(j);
    return j.dump();
  };
  schedules::Config extra = task.space().at(0);
  extra.set("vector_width", 8);
  schedules::Config outside = task.space().at(0);
  outside.set("nr_vecs", 5);
  std::map<std::string, int64_t> missing_knob = task.space().at(0).values();
  missing_knob.erase("k_unroll");

  std::vector<std::pair<std::string, std::string>> cases = {
      // line, expected reason
      {good, ""},
      {"{\"v\":1,\"target\":", "malformed JSON"},
      {"[1,2,3]", "not a JSON object"},
      {edited([](auto& j) { j["v"] = 3; }), "unknown format version 3"},
      {edited([](auto& j) { j.erase("flops"); }), "missing field 'flops'"},
      {edited([](auto& j) { j["task"].erase("template"); }), "missing field 'task.template'"},
      {edited([](auto& j) { j["task"]["workload"]["dtype"] = "f8"; }), "task.workload.dtype"},
      {edited([](auto& j) { j["result"]["error"] = "segfault"; }), "is not an error kind"},
      {edited([](auto& j) { j["result"]["costs"] = {-1.0}; }), "must be a finite number >= 0"},
      {edited([](auto& j) { j["result"]["costs"] = nlohmann::json::array(); }),
       "is ok but 'result.costs' is empty"},
      // Values past INT64_MAX must not wrap to negative numbers.
      {edited([](auto& j) { j["config"]["mr"] = UINT64_MAX; }), "must be a 64-bit integer"},
      {edited([](auto& j) { j["task"]["workload"]["params"]["M"] = UINT64_MAX; }),
       "'task.workload.params.M' is out of the int64 range"},
      {edited([](auto& j) { j["task"]["workload"]["params"]["M"] = "64"; }),
       "'task.workload.params.M' must be a number"},
      {edited([](auto& j) { j["result"]["costs"] = {0.0}; }), "holds a time of 0"},
      {with([](TuningRecord& r) { r.template_name = "dense.tiled"; }),
       "unknown template 'dense.tiled' (known for dense: "},
      {with([](TuningRecord& r) { r.template_name = "conv2d.nchwc"; }),
       "template 'conv2d.nchwc' implements op 'conv2d', not 'dense'"},
      {with([&](TuningRecord& r) { r.config = outside; }),
       "knob 'nr_vecs' = 5 is not one of its choices"},
      {with([&](TuningRecord& r) { r.config = extra; }), "knob 'vector_width' is not in it"},
      {with([&](TuningRecord& r) { r.config = schedules::Config(missing_knob); }),
       "has no value for knob 'k_unroll'"},
      {with([](TuningRecord& r) { r.workload.params.erase("K"); }), "missing shape parameter 'K'"},
      {"   ", ""},  // blank lines are skipped quietly
      {good, ""},
  };
  std::string text;
  for (const auto& [line, reason] : cases) text += line + "\n";
  write_text(dir.file("bad.jsonl"), text);

  LoadedRecords loaded = load_records({dir.file("bad.jsonl")});
  EXPECT_EQ(loaded.records.size(), 2u);
  size_t problem = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].second.empty()) continue;
    ASSERT_LT(problem, loaded.problems.size()) << "no problem reported for line " << i + 1;
    const RecordProblem& p = loaded.problems[problem++];
    EXPECT_EQ(p.line, i + 1) << p.str();
    EXPECT_NE(p.reason.find(cases[i].second), std::string::npos)
        << "line " << i + 1 << ": want '" << cases[i].second << "' in: " << p.reason;
    EXPECT_EQ(p.str().rfind(dir.file("bad.jsonl") + ":" + std::to_string(i + 1) + ": ", 0), 0u);
  }
  EXPECT_EQ(problem, loaded.problems.size());
}

TEST(Records, TargetFilterReportsOtherTargets) {
  TempDir dir;
  DenseTask task;
  TuningRecord neon = task.record(2, {1e-5});
  neon.target = target_from_name("arm-neon");
  RecordWriter(dir.file("log.jsonl")).append({task.record(1, {1e-5}), neon});

  LoadedRecords all = load_records({dir.file("log.jsonl")});
  EXPECT_EQ(all.records.size(), 2u);
  EXPECT_TRUE(all.problems.empty());
  LoadOptions only_avx2;
  only_avx2.target = task.target;
  LoadedRecords avx2 = load_records({dir.file("log.jsonl")}, only_avx2);
  ASSERT_EQ(avx2.records.size(), 1u);
  EXPECT_EQ(avx2.records[0].target.name, "x86-avx2");
  ASSERT_EQ(avx2.problems.size(), 1u);
  EXPECT_EQ(avx2.problems[0].line, 2u);
  EXPECT_NE(avx2.problems[0].reason.find("recorded for target 'arm-neon'"), std::string::npos);
  // The same preset with one more feature is another target.
  Target more = task.target;
  more.features.push_back("+avx512f");
  EXPECT_NE(target_key(more), target_key(task.target));
  Target reordered = task.target;
  std::reverse(reordered.features.begin(), reordered.features.end());
  EXPECT_EQ(target_key(reordered), target_key(task.target));
}

TEST(Records, MissingFileIsAUserError) {
  TempDir dir;
  EXPECT_THROW(load_records({dir.file("nope.jsonl")}), UserError);
  EXPECT_THROW(load_records({dir.path()}), UserError);  // a folder is not a log
  EXPECT_THROW(RecordWriter(dir.file("no/such/folder/log.jsonl")), UserError);
}

TEST(Records, MeasuredSetForResume) {
  DenseTask task;
  std::vector<TuningRecord> records = {task.record(1, {1e-5}),
                                       task.record(2, {}, MeasureErrorKind::CompileError),
                                       task.record(3, {}, MeasureErrorKind::Cancelled),
                                       task.record(4, {}, MeasureErrorKind::WorkerLost)};
  MeasuredSet measured(records);
  EXPECT_EQ(measured.size(), 2u);
  auto has = [&](uint64_t i) {
    return measured.contains(task.template_name, task.workload, task.target, task.space().at(i));
  };
  EXPECT_TRUE(has(1));
  EXPECT_TRUE(has(2));   // a config that does not compile will not compile next time either
  EXPECT_FALSE(has(3));  // never ran: measure it on resume
  EXPECT_FALSE(has(4));
  EXPECT_FALSE(has(5));
  EXPECT_FALSE(measured.contains(task.template_name, task.workload, target_from_name("arm-neon"),
                                 task.space().at(1)));
}

}  // namespace
}  // namespace kiln::tuner
