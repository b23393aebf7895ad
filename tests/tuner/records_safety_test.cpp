// What the records layer must never do: append to a file that is not a log (the model being
// tuned, a config, a binary), cut anything but a torn record off a log's end, or accept a
// record whose time is not a positive number. And the typed parameters of format version 2,
// with version-1 logs (reals in fixed point, the unit in the name) converted on reading.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/base/error.h"
#include "tests/test_util.h"
#include "tests/tuner/records_test_util.h"
#include "tuner/history_best.h"
#include "tuner/records.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;
using testing::read_text;
using testing::TempDir;
using testing::write_text;
using kiln::test::user_error_of;

TEST(RecordsSafety, AFileThatIsNotALogIsRefusedAndLeftAlone) {
  TempDir dir;
  const std::vector<std::string> not_logs = {
      std::string("\x08\x07\x12\x04onnx\x00\x01 model bytes", 22),  // a binary, no newline
      "{\"name\": \"settings\"}",                                   // JSON, but not a record
      "first line of notes\nsecond line\n",                         // text with newlines
      "first line of notes\nsecond line without newline",
  };
  for (const std::string& text : not_logs) {
    const std::string path = dir.file("model.onnx");
    write_text(path, text);
    const std::string error = user_error_of([&] { RecordWriter w(path); });
    EXPECT_NE(error.find("is not a kiln records log"), std::string::npos) << error;
    EXPECT_EQ(read_text(path), text) << "the file was changed";
  }
}

TEST(RecordsSafety, OnlyATornRecordIsCutFromALogsEnd) {
  TempDir dir;
  DenseTask task;
  const std::string log = dir.file("log.jsonl");
  RecordWriter(log).append({task.record(0, {1e-5})});
  // A log someone appended a note to, without a newline: not a torn record, so not cut.
  write_text(log, "my note", std::ios::app);
  const std::string before = read_text(log);
  const std::string error = user_error_of([&] { RecordWriter w(log); });
  EXPECT_NE(error.find("neither a record nor the start of one"), std::string::npos) << error;
  EXPECT_EQ(read_text(log), before);

  // A log whose only line was cut by a kill during its first write is still a log.
  const std::string first = dir.file("first.jsonl");
  const std::string line = record_to_json(task.record(1, {1e-5}));
  write_text(first, line.substr(0, 30));
  RecordWriter writer(first);
  ASSERT_TRUE(writer.repaired_tail());
  writer.append({task.record(2, {2e-5})});
  EXPECT_EQ(load_records({first}).records.size(), 1u);
}

TEST(RecordsSafety, ADirectoryOrDeviceIsNotALog) {
  TempDir dir;
  EXPECT_THROW(RecordWriter w(dir.path()), UserError);
}

TEST(RecordsSafety, TimesMustBePositive) {
  DenseTask task;
  std::string zero = record_to_json(task.record(0, {0.0}));
  ParsedRecord parsed = parse_record(zero);
  EXPECT_FALSE(parsed.record);
  EXPECT_NE(parsed.error.find("time of 0"), std::string::npos) << parsed.error;
  // A failed measurement's costs are not times of a kernel that ran: 0 is fine there.
  EXPECT_TRUE(
      parse_record(record_to_json(task.record(0, {0.0}, MeasureErrorKind::RuntimeError))).record);
  EXPECT_FALSE(parse_record(record_to_json(task.record(0, {-1e-5}))).record);
}

TEST(RecordsV2, RealParametersRoundTripExactly) {
  DenseTask task;
  TuningRecord r = task.record(0, {1e-5});
  r.workload.params["lo"] = -std::numeric_limits<double>::infinity();
  r.workload.params["hi"] = 0.1f;  // an f32 attribute, as a double: 0.100000001490116...
  r.workload.params["eps"] = 1e-12;
  const std::string line = record_to_json(r);
  EXPECT_NE(line.find("\"v\":2"), std::string::npos) << line;
  EXPECT_NE(line.find("\"lo\":\"-inf\""), std::string::npos) << line;
  ParsedRecord back = parse_record(line);
  ASSERT_TRUE(back.record) << back.error;
  EXPECT_EQ(back.record->workload.params, r.workload.params);
  EXPECT_TRUE(back.record->workload.params.at("hi").is_real());
  EXPECT_TRUE(back.record->workload.params.at("M").is_integer());
  EXPECT_EQ(back.record->workload.str(), r.workload.str());
  // 1 and 1.0 are different parameters: an integer where a real was meant is not the same key.
  EXPECT_NE(schedules::Param(1).str(), schedules::Param(1.0).str());
}

TEST(RecordsV1, FixedPointParametersAreReadAsReals) {
  const std::string log = std::string(KILN_TUNER_TEST_DATA) + "/v1_fixed_point_params.jsonl";
  LoadedRecords loaded = load_records({log});
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
  ASSERT_EQ(loaded.records.size(), 3u);
  const auto& clip = loaded.records[0].workload;
  EXPECT_EQ(clip.params.count("lo_milli"), 0u);
  EXPECT_EQ(clip.real("lo"), -0.25);
  EXPECT_EQ(clip.real("hi"), 6.0);
  // Clip's ±1e12 meant no bound.
  EXPECT_TRUE(std::isinf(loaded.records[1].workload.real("lo")));
  EXPECT_LT(loaded.records[1].workload.real("lo"), 0);
  // A slope written as 1e8 units of 1e-9 is the f32 0.1 a model states, so an old record
  // keys the workload a compile makes today.
  EXPECT_EQ(loaded.records[2].workload.real("alpha"), static_cast<double>(0.1f));
  schedules::Workload today{
      "leaky_relu", {{"rank", 1}, {"a0", 1000}, {"alpha", 0.1f}}, ir::DataType::f32(), {}};
  EXPECT_TRUE(HistoryBest(loaded.records).query(today, loaded.records[2].target).has_value());
}

}  // namespace
}  // namespace kiln::tuner
