// `kiln records` run as a user runs it: the built binary as a child process, its output and
// exit status checked. The plot is rendered with rsvg-convert and its pixels inspected.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "tests/tuner/png_reader.h"
#include "tests/tuner/records_test_util.h"
#include "tuner/history_best.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;
using testing::lines_of;
using testing::read_text;
using testing::TempDir;

struct Ran {
  int status = -1;
  std::string out, err;
};

Ran run_kiln(const TempDir& dir, const std::string& args) {
  std::string cmd = std::string(KILN_BIN) + " " + args + " >" + dir.file("stdout.txt") + " 2>" +
                    dir.file("stderr.txt");
  int rc = std::system(cmd.c_str());
  Ran r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = read_text(dir.file("stdout.txt"));
  r.err = read_text(dir.file("stderr.txt"));
  return r;
}

// A log of `trials` measurements of `task` that improves as a tuner would, with a compile
// error every 7th trial and a wrong result every 11th.
std::vector<TuningRecord> tuning_run(const DenseTask& task, size_t trials, double speedup) {
  std::vector<TuningRecord> records;
  uint64_t space = task.space().size();
  for (size_t i = 0; i < trials; ++i) {
    double cost = 1e-4 / (1 + speedup * static_cast<double>(i % 13 + i / 3) / trials);
    MeasureErrorKind e = i % 7 == 6     ? MeasureErrorKind::CompileError
                         : i % 11 == 10 ? MeasureErrorKind::WrongResult
                                        : MeasureErrorKind::Ok;
    records.push_back(task.record(i % space,
                                  e == MeasureErrorKind::CompileError
                                      ? std::vector<double>{}
                                      : std::vector<double>{cost, cost * 1.01},
                                  e));
  }
  return records;
}

TEST(RecordsCli, SummaryListsTasksErrorsAndBestGflops) {
  TempDir dir;
  DenseTask task;
  RecordWriter(dir.file("log.jsonl"))
      .append({task.record(1, {1e-4}), task.record(2, {}, MeasureErrorKind::CompileError),
               task.record(3, {2e-6}, MeasureErrorKind::WrongResult), task.record(4, {5.24288e-5}),
               task.record(5, {}, MeasureErrorKind::CompileError)});
  testing::write_text(dir.file("log.jsonl"), "{oops\n", std::ios::app);
  Ran r = run_kiln(dir, "records summary " + dir.file("log.jsonl"));
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> out = lines_of(r.out);
  ASSERT_EQ(out.size(), 7u) << r.out;  // the task table, its total, then the CPU table
  EXPECT_NE(out[0].find("template"), std::string::npos);
  EXPECT_NE(out[0].find("best GFLOPS"), std::string::npos);
  // 524288 flops in 5.24288e-5 s: 10 GFLOPS; the wrong result's 2 us does not count.
  EXPECT_NE(out[1].find("dense.packed"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("dense K=64 M=64 N=64 f32"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("x86-avx2"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("compile 2, wrong_result 1"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("10.00"), std::string::npos) << out[1];
  EXPECT_EQ(out[2], "1 tasks, 5 records");
  EXPECT_EQ(out[4], "by CPU:");
  EXPECT_EQ(out[6].rfind("unknown CPU", 0), 0u) << out[6];  // written without a machine
  EXPECT_NE(r.err.find("log.jsonl:6: malformed JSON"), std::string::npos) << r.err;
}

// Logs of two machines merge into one; the summary keeps each CPU's rows apart.
TEST(RecordsCli, SummaryOfAMergedLogGroupsByCpu) {
  TempDir dir;
  DenseTask task;
  auto measured_on = [](TuningRecord r, const std::string& model, uint32_t threads) {
    r.result.measured_on.vendor = "AuthenticAMD";
    r.result.measured_on.model = model;
    r.result.measured_on.features = {"avx", "avx2", "fma"};
    r.result.measured_on.cores = 16;
    r.result.measured_on.threads = threads;
    r.result.measured_on.kiln = "0.45.0";
    return r;
  };
  RecordWriter(dir.file("zen3.jsonl"))
      .append({measured_on(task.record(1, {1e-4}), "AMD EPYC 7B13", 1),
               measured_on(task.record(2, {1e-4}), "AMD EPYC 7B13", 1)});
  RecordWriter(dir.file("zen4.jsonl"))
      .append({measured_on(task.record(1, {1e-4}), "AMD EPYC 9B14", 2)});
  Ran merge = run_kiln(dir, "records merge " + dir.file("zen3.jsonl") + " " +
                                dir.file("zen4.jsonl") + " -o " + dir.file("team.jsonl"));
  ASSERT_EQ(merge.status, 0) << merge.err;
  Ran r = run_kiln(dir, "records summary " + dir.file("team.jsonl"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> out = lines_of(r.out);
  ASSERT_EQ(out.size(), 9u) << r.out;
  EXPECT_EQ(out[3], "1 tasks, 3 records");
  EXPECT_NE(out[1].find("AuthenticAMD AMD EPYC 7B13"), std::string::npos) << r.out;
  EXPECT_NE(out[2].find("AuthenticAMD AMD EPYC 9B14"), std::string::npos) << r.out;
  // cpu, cores, threads, features, kiln, tasks, records
  EXPECT_NE(out[7].find("16     1        avx,avx2,fma  0.45.0  1      2"), std::string::npos) << r.out;
  EXPECT_NE(out[8].find("16     2        avx,avx2,fma  0.45.0  1      1"), std::string::npos) << r.out;
}

TEST(RecordsCli, MissingFileAndBadFlagExitWithStatus2AndOneLine) {
  TempDir dir;
  Ran missing = run_kiln(dir, "records summary " + dir.file("nope.jsonl"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(lines_of(missing.err).size(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("cannot open records file '" + dir.file("nope.jsonl")),
            std::string::npos)
      << missing.err;

  DenseTask task;
  RecordWriter(dir.file("log.jsonl")).append({task.record(1, {1e-4})});
  Ran flag = run_kiln(dir, "records summary --bogus " + dir.file("log.jsonl"));
  EXPECT_EQ(flag.status, 2);
  EXPECT_EQ(lines_of(flag.err).size(), 1u) << flag.err;
  EXPECT_NE(flag.err.find("--bogus"), std::string::npos) << flag.err;

  Ran no_out = run_kiln(dir, "records merge " + dir.file("log.jsonl"));
  EXPECT_EQ(no_out.status, 2);
  EXPECT_NE(no_out.err.find("--out"), std::string::npos) << no_out.err;
}

TEST(RecordsCli, BestWritesTheBestRecordOfEachTask) {
  TempDir dir;
  DenseTask task, other;
  other.workload.params["N"] = 128;
  RecordWriter(dir.file("log.jsonl"))
      .append({task.record(1, {3e-5}), other.record(1, {8e-5}), task.record(2, {1e-5}),
               task.record(3, {1e-6}, MeasureErrorKind::WrongResult), other.record(2, {9e-5})});
  Ran r = run_kiln(dir, "records best " + dir.file("log.jsonl") + " -o " + dir.file("best.jsonl"));
  ASSERT_EQ(r.status, 0) << r.err;
  LoadedRecords best = load_records({dir.file("best.jsonl")});
  EXPECT_TRUE(best.problems.empty());
  ASSERT_EQ(best.records.size(), 2u);
  EXPECT_EQ(best.records[0].config, task.space().at(2));
  EXPECT_EQ(best.records[1].config, other.space().at(1));
  // Without -o the lines go to stdout.
  Ran to_stdout = run_kiln(dir, "records best " + dir.file("log.jsonl"));
  EXPECT_EQ(to_stdout.out, read_text(dir.file("best.jsonl")));
}

// `records pin` freezes the config compile picks per workload: a later log with a faster
// config for a pinned workload does not change what a compile given the pins builds, and the
// workloads no pin covers still take the later log's best.
TEST(RecordsCli, PinFreezesTheChosenConfigAgainstLaterTuning) {
  TempDir dir;
  DenseTask task, other;
  other.workload.params["N"] = 128;
  RecordWriter(dir.file("log.jsonl"))
      .append({task.record(1, {3e-5}), task.record(2, {1e-5}),
               task.record(3, {1e-6}, MeasureErrorKind::WrongResult)});
  Ran r = run_kiln(dir, "records pin " + dir.file("log.jsonl") + " -o " + dir.file("pins.jsonl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("pinned 1 workloads"), std::string::npos) << r.err;
  LoadedRecords pins = load_records({dir.file("pins.jsonl")});
  EXPECT_TRUE(pins.problems.empty());
  ASSERT_EQ(pins.records.size(), 1u);
  EXPECT_EQ(pins.records[0].config, task.space().at(2));

  const std::vector<TuningRecord> later = {task.record(4, {1e-7}), other.record(1, {5e-5}),
                                           other.record(2, {4e-5})};
  const HistoryBest unpinned(later), pinned(with_pins(pins.records, later));
  EXPECT_EQ(unpinned.query(task.workload, task.target)->config, task.space().at(4));
  EXPECT_EQ(pinned.query(task.workload, task.target)->config, task.space().at(2));
  EXPECT_EQ(pinned.query(other.workload, other.target)->config, other.space().at(2));

  // Nothing to pin is an error, not an empty file.
  RecordWriter(dir.file("failed.jsonl"))
      .append({task.record(1, {}, MeasureErrorKind::CompileError)});
  Ran none = run_kiln(dir, "records pin " + dir.file("failed.jsonl") + " -o " + dir.file("p2"));
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("nothing to pin"), std::string::npos) << none.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p2")));
}

TEST(RecordsCli, MergeDropsDuplicatesAndBadLines) {
  TempDir dir;
  DenseTask task;
  std::vector<TuningRecord> a = {task.record(1, {3e-5}), task.record(2, {2e-5})};
  std::vector<TuningRecord> b = {task.record(2, {2e-5}), task.record(3, {1e-5})};  // 2 again
  RecordWriter(dir.file("a.jsonl")).append(a);
  RecordWriter(dir.file("b.jsonl")).append(b);
  testing::write_text(dir.file("b.jsonl"), "{\"v\":7}\n", std::ios::app);
  std::string logs = dir.file("a.jsonl") + " " + dir.file("b.jsonl");
  Ran r = run_kiln(dir, "records merge " + logs + " -o " + dir.file("merged.jsonl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("merged 3 records"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 duplicates dropped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("b.jsonl:3: unknown format version 7"), std::string::npos) << r.err;
  LoadedRecords merged = load_records({dir.file("merged.jsonl")});
  EXPECT_TRUE(merged.problems.empty());
  ASSERT_EQ(merged.records.size(), 3u);
  EXPECT_EQ(merged.records[2].config, task.space().at(3));
  // Merging into one of its own inputs works (temporary file, then rename) and leaves no
  // temporary file behind.
  Ran again = run_kiln(dir, "records merge " + logs + " " + dir.file("merged.jsonl") + " -o " +
                                dir.file("merged.jsonl"));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(load_records({dir.file("merged.jsonl")}).records.size(), 3u);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 5u);  // a, b, merged, stdout.txt, stderr.txt
}

TEST(RecordsCli, PlotRendersACurvePerLog) {
  TempDir dir;
  DenseTask task;
  RecordWriter(dir.file("random.jsonl")).append(tuning_run(task, 120, 1.0));
  RecordWriter(dir.file("xgb.jsonl")).append(tuning_run(task, 200, 3.0));
  Ran r = run_kiln(dir, "records plot " + dir.file("random.jsonl") + " " + dir.file("xgb.jsonl") +
                            " -o " + dir.file("curve.svg") + " --title 'dense 64x64x64'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = read_text(dir.file("curve.svg"));
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  for (const char* text : {">random.jsonl (best ", ">xgb.jsonl (best ", ">dense 64x64x64<",
                           ">trial<", ">best GFLOPS so far<", "<polyline"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;

  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "rsvg-convert (librsvg2-bin) is not installed: the SVG was not rendered";
  std::string png = dir.file("curve.png");
  ASSERT_EQ(std::system(("rsvg-convert -f png -o " + png + " " + dir.file("curve.svg")).c_str()),
            0);
  std::string error;
  kiln::testing::Image img = kiln::testing::read_png(png, &error);
  ASSERT_GT(img.width, 0u) << error;
  EXPECT_EQ(img.width, 800u);
  // Not blank: each curve's colour is drawn (the first two of the palette), on white.
  auto count = [&](int r, int g, int b) {
    size_t n = 0;
    for (uint32_t y = 0; y < img.height; ++y)
      for (uint32_t x = 0; x < img.width; ++x) {
        const uint8_t* p = img.pixel(x, y);
        n += std::abs(p[0] - r) < 12 && std::abs(p[1] - g) < 12 && std::abs(p[2] - b) < 12;
      }
    return n;
  };
  EXPECT_GT(count(255, 255, 255), img.width * img.height / 2);  // a white background
  EXPECT_GT(count(0x1f, 0x77, 0xb4), 200u);                     // first curve, blue
  EXPECT_GT(count(0xd6, 0x27, 0x28), 200u);                     // second curve, red
  EXPECT_GT(count(0x33, 0x33, 0x33), 500u);                     // frame, ticks and text
}

// More logs than the palette has colours (tune_bench plots 3 tuners x 3 seeds): a curve that
// repeats an earlier one's colour is dashed, in the plot and in its legend entry.
TEST(RecordsCli, PlotTellsApartCurvesThatShareAColour) {
  TempDir dir;
  DenseTask task;
  std::string args = "records plot";
  for (int i = 0; i < 9; ++i) {
    const std::string log = dir.file("run" + std::to_string(i) + ".jsonl");
    RecordWriter(log).append(tuning_run(task, 20 + i, 1.0));
    args += " " + log;
  }
  Ran r = run_kiln(dir, args + " -o " + dir.file("curve.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = read_text(dir.file("curve.svg"));
  // The stroke attributes of every curve, in drawing order.
  std::vector<std::string> strokes;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1))
    strokes.push_back(svg.substr(at, svg.find("stroke-width", at) - at));
  ASSERT_EQ(strokes.size(), 9u);
  const auto colour = [](const std::string& s) { return s.substr(s.find("stroke=\""), 17); };
  EXPECT_EQ(colour(strokes[8]), colour(strokes[0]));
  EXPECT_EQ(strokes[0].find("dasharray"), std::string::npos) << strokes[0];
  EXPECT_NE(strokes[8].find("stroke-dasharray"), std::string::npos) << strokes[8];
  size_t dashed_legend = 0;
  for (size_t at = svg.find("stroke-dasharray"); at != std::string::npos;
       at = svg.find("stroke-dasharray", at + 1))
    ++dashed_legend;
  EXPECT_EQ(dashed_legend, 2u);  // the ninth curve and its legend line
}

// A tune's closing re-measurements of its best few are not trials: the curve and its legend
// count the trials only, and a re-measured figure does not raise the best found.
TEST(RecordsCli, PlotCountsTrialsNotReMeasurements) {
  TempDir dir;
  DenseTask task;
  std::vector<TuningRecord> log = {task.record(1, {1e-4}), task.record(2, {5e-5}),
                                   task.record(3, {8e-5})};
  TuningRecord again = task.record(2, {2.5e-5});  // twice as fast measured again
  again.result.message = kRemeasured;
  log.push_back(again);
  RecordWriter(dir.file("log.jsonl")).append(log);
  Ran r = run_kiln(dir, "records plot " + dir.file("log.jsonl") + " -o " + dir.file("c.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = read_text(dir.file("c.svg"));
  char want[96];
  std::snprintf(want, sizeof want, "(best %.1f GFLOPS at trial 2 of 3)", log[1].gflops());
  EXPECT_NE(svg.find(want), std::string::npos) << svg;
}

TEST(RecordsCli, PlotOfLogsWithoutRecordsIsAnError) {
  TempDir dir;
  testing::write_text(dir.file("empty.jsonl"), "");
  Ran r = run_kiln(dir, "records plot " + dir.file("empty.jsonl") + " -o " + dir.file("c.svg"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("nothing to plot"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.svg")));
}

}  // namespace
}  // namespace kiln::tuner
