// `kiln tune` run as a user runs it: the real binary, an embedded farm of real processes on
// loopback, small budgets. Every tuner finishes and writes a valid log; a run killed with
// SIGKILL mid-way resumes from its log with no line lost and no config measured twice;
// bad flags and bad logs give one clear line and exit status 2.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "rpc/farm/local_farm.h"
#include "runtime/process/temp_dir.h"
#include "schedules/registry.h"
#include "tests/tools/kiln_cli.h"
#include "tuner/history_best.h"
#include "tuner/records.h"
#include "tuner/task_tuner.h"

namespace kiln::tools {
namespace {

namespace fs = std::filesystem;
using namespace kiln::tools::test;

const char* kTask = "--op dense --shape 24,64,40 --min-repeat-ms 1 --repeat 2 --batch 8 --quiet";

class EveryTuner : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryTuner, FinishesOnTheEmbeddedFarmAndWritesAValidLog) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("every_" + GetParam() + ".jsonl");
  Output o = run(std::string("tune ") + kTask + " --target host --trials 16 --tuner " + GetParam() +
                 " --log " + log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("best: "), std::string::npos) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(log);
  EXPECT_GE(records.size(), 16u);
  size_t ok = 0;
  for (const auto& r : records) ok += r.result.ok();
  EXPECT_GT(ok, 0u);
}

INSTANTIATE_TEST_SUITE_P(Tune, EveryTuner, ::testing::Values("xgb", "ga", "random", "grid"));

// The embedded farm gives each worker --threads cores: more workers would time parallel
// kernels on oversubscribed cores.
TEST(Tune, EmbeddedFarmHasOneWorkerPerThreadsCores) {
  TempDir dir("kiln-tune-test");
  Output o = run("tune --op dense --shape 24,64,40 --min-repeat-ms 1 --repeat 2 --batch 4 "
                 "--target host --trials 4 --tuner random --threads 2 --log " + dir.file("t2.jsonl"));
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency() / 2);
  EXPECT_NE(o.text.find("embedded farm of " + std::to_string(workers) + " native worker"),
            std::string::npos) << o.text;
}

TEST(Tune, InspectWithRecordsUsesTheBestConfig) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("inspect.jsonl");
  ASSERT_EQ(WEXITSTATUS(run(std::string("tune ") + kTask + " --target host --trials 8 --tuner random"
                            " --log " + log).status), 0);
  // The best as apply-history-best judges it: the end-of-tune re-measurements decide.
  std::optional<tuner::TuningRecord> best;
  for (const auto& r : tuner::settle_records(valid_log(log)))
    if (r.result.ok() && (!best || r.result.cost() < best->result.cost())) best = r;
  ASSERT_TRUE(best);
  Output o = run("inspect --op dense --shape 24,64,40 --target host --records " + log);
  EXPECT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("config " + best->config.to_json()), std::string::npos) << o.text;
  EXPECT_EQ(o.text.find("not tuned"), std::string::npos) << o.text;
  // Another shape is not in the log: the fallback, with a warning.
  o = run("inspect --op dense --shape 24,64,41 --target host --records " + log);
  EXPECT_NE(o.text.find("is not tuned in the records"), std::string::npos) << o.text;
}

TEST(Tune, ArmNeonUnderQemu) {
  if (std::system("command -v qemu-aarch64 >/dev/null") != 0) GTEST_SKIP() << "no qemu-aarch64";
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("arm.jsonl");
  Output o = run("tune --op dense --shape 8,16,12 --min-repeat-ms 0 --repeat 1 --batch 4 --quiet "
                 "--target arm-neon --trials 8 --tuner xgb --workers 1 --log " + log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_GE(valid_log(log).size(), 8u);
}

// Builders on the farm: candidates for an ARM board compiled by a builder worker (kiln worker
// --role builder, another process, x86) and measured by an AArch64 worker under qemu, all on
// loopback through the tracker; every candidate the tune measured was built there.
TEST(Tune, ABuilderCompilesArmCandidatesThatAnArmWorkerRuns) {
  if (std::system("command -v qemu-aarch64 >/dev/null") != 0) GTEST_SKIP() << "no qemu-aarch64";
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("built.jsonl");
  Output o = run("tune --op dense --shape 8,16,12 --min-repeat-ms 0 --repeat 1 --batch 4 "
                 "--target arm-neon --trials 8 --tuner random --workers 1 --builders 1 --log " +
                 log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("1 AArch64 worker under qemu and 1 builder"), std::string::npos) << o.text;
  size_t ok = 0, measured = 0;
  for (const tuner::TuningRecord& r : valid_log(log)) {
    ++measured;
    ok += r.result.ok();
    EXPECT_EQ(r.result.measured_on.emulator, "qemu-aarch64") << tuner::record_to_json(r);
  }
  EXPECT_GE(measured, 8u);
  EXPECT_GT(ok, 0u);
  // Every record's candidate (the trials and the re-measured ones) came from the builder.
  const size_t at = o.text.find(" candidates built on the builders of key 'builder'");
  ASSERT_NE(at, std::string::npos) << o.text;
  const size_t start = o.text.rfind("kiln tune: ", at) + std::string("kiln tune: ").size();
  EXPECT_GE(std::stoul(o.text.substr(start, at - start)), 8u) << o.text;

  // Builders belong to the embedded farm; on a farm of one's own they are named by key.
  Output mixed = run("tune --op dense --shape 8,16,12 --target host --trials 4 --builders 1 "
                     "--farm 127.0.0.1:1 --key k --log " + dir.file("x.jsonl"));
  EXPECT_EQ(WEXITSTATUS(mixed.status), 2) << mixed.text;
  EXPECT_NE(mixed.text.find("--build-key KEY"), std::string::npos) << mixed.text;
}

TEST(Tune, KilledMidRunResumesWithNothingLostOrMeasuredTwice) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("killed.jsonl");
  const std::string args = std::string(kTask) + " --target host --tuner random --trials 200 --log " + log;
  {
    farm::ChildProcess tune({"sh", "-c", std::string("exec ") + KILN_BIN + " tune " + args},
                            log + ".out");
    // Let a few batches land, then kill it without warning.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (line_count(log) < 24 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tune.kill_now(SIGKILL);
    tune.wait_exit(10);
  }
  const size_t before = line_count(log);
  ASSERT_GE(before, 24u) << farm::read_text(log + ".out");
  double best_before = 0;
  for (const auto& r : tuner::load_records({log}).records) best_before = std::max(best_before, r.gflops());

  // --trials is the log's total: 16 more than it holds.
  Output o = run("tune " + std::string(kTask) + " --target host --tuner random --trials " +
                 std::to_string(before + 16) + " --log " + log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(log);
  EXPECT_GE(records.size() + 1, before + 16);  // a torn last line may have been cut
  std::map<std::string, int> measured;
  double best_after = 0;
  for (const auto& r : records) {
    best_after = std::max(best_after, r.gflops());
    if (r.result.message != tuner::kRemeasured) ++measured[r.config.to_json()];
  }
  for (const auto& [config, n] : measured) EXPECT_EQ(n, 1) << config << " measured " << n << " times";
  EXPECT_GE(best_after, best_before);
}

TEST(Tune, CandidatesPastTheBuildTimeoutAreKilledAndRecorded) {
  // A millisecond is far less than LLVM needs for any candidate: each build is killed, the
  // tuner goes on to the next batch and the log says why each candidate has no time.
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("build_timeout.jsonl");
  Output o = run(std::string("tune ") + kTask +
                 " --target host --tuner random --trials 12 --build-timeout 0.001 --log " + log);
  EXPECT_EQ(WEXITSTATUS(o.status), 1) << o.text;  // nothing ran correctly: no best
  EXPECT_NE(o.text.find("no config of"), std::string::npos) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(log);
  ASSERT_EQ(records.size(), 12u);
  for (const auto& r : records) {
    EXPECT_EQ(r.result.error, tuner::MeasureErrorKind::CompileTimeout) << r.result.message;
    EXPECT_LT(r.result.all_cost, 5.0);  // killed at the deadline, not left to finish
  }
}

TEST(Tune, CandidatesWithOtherOutputLayoutsAreNotCalledWrong) {
  // conv2d.nchwc writes its output in blocks of oc_bn channels, a knob: a batch holds
  // candidates of several blocks (16 and 32 with AVX-512; 8, 16 and 32 with AVX2), each
  // checked against the reference in its layout.
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("layouts.jsonl");
  Output o = run("tune --op conv2d --shape 1,16,8,8,32,3,3 --pad 1 --template conv2d.nchwc "
                 "--min-repeat-ms 0 --repeat 1 --batch 16 --quiet --target host --tuner random "
                 "--trials 16 --log " + log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::set<int64_t> blocks;
  for (const auto& r : valid_log(log)) {
    blocks.insert(r.config["oc_bn"]);
    EXPECT_EQ(r.result.error, tuner::MeasureErrorKind::Ok)
        << r.config.to_json() << ": " << r.result.message;
  }
  EXPECT_GE(blocks.size(), 2u);
}

TEST(Tune, OldSpacePinsTheKnobsAddedSince) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("old_space.jsonl");
  Output o = run(std::string("tune ") + kTask +
                 " --target host --tuner random --trials 16 --old-space --log " + log);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  for (const auto& r : valid_log(log)) {
    EXPECT_EQ(r.config["kc"], 0) << r.config.to_json();
    EXPECT_EQ(r.config["mc_tiles"], 1) << r.config.to_json();
  }
  o = run("tune tests/none.onnx --old-space --log " + log);
  EXPECT_EQ(WEXITSTATUS(o.status), 2) << o.text;
  EXPECT_NE(o.text.find("--old-space applies to one operator"), std::string::npos) << o.text;
}

// A tune measures the untuned kernel first, so its log weighs every tuned record against it;
// --skip-untuned leaves the search on its own (a tuner comparison).
TEST(Tune, MeasuresTheUntunedConfigFirstUnlessSkipped) {
  TempDir dir("kiln-tune-test");
  const std::string with = dir.file("with_untuned.jsonl"), without = dir.file("without.jsonl");
  const std::string task =
      std::string("tune ") + kTask + " --target host --tuner random --trials 8";
  Output o = run(task + " --log " + with);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  o = run(task + " --skip-untuned --log " + without);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  const std::vector<tuner::TuningRecord> a = valid_log(with), b = valid_log(without);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const schedules::OpTemplate& tpl = schedules::template_named(a[0].template_name);
  const schedules::Config untuned = tpl.fallback(a[0].workload, a[0].target);
  EXPECT_EQ(a[0].config.to_json(), untuned.to_json());
  EXPECT_TRUE(a[0].result.ok()) << a[0].result.message;
  // Without it the search's own first point leads (seed 0 does not draw the untuned one).
  EXPECT_NE(b[0].config.to_json(), untuned.to_json());
  o = run("tune tests/none.onnx --skip-untuned --log " + with);
  EXPECT_EQ(WEXITSTATUS(o.status), 2) << o.text;
  EXPECT_NE(o.text.find("--skip-untuned applies to one operator"), std::string::npos) << o.text;
}

// --trials counts the log's trials of the task, as in a network tune: the same command again
// measures nothing more.
TEST(Tune, TrialsAreTheLogsTotal) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("total.jsonl");
  const std::string cmd = "tune " + std::string(kTask) + " --target host --tuner random --trials 8 --log " + log;
  Output o = run(cmd);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  const size_t lines = line_count(log);
  o = run(cmd);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_EQ(line_count(log), lines) << o.text;
  EXPECT_NE(o.text.find("best:"), std::string::npos) << o.text;
}

// Ctrl-C stops after the batch in flight: exit 130 with "stopped", never an error of the farm
// calls it cancelled, and the log stays valid. A terminal sends SIGINT to the whole foreground
// process group, the embedded farm's tracker and workers included: so does this test (kiln
// runs as the leader of a group of its own).
TEST(Tune, InterruptExitsWith130) {
  TempDir dir("kiln-tune-test");
  const std::string log = dir.file("interrupted.jsonl");
  for (int attempt = 0; attempt < 3; ++attempt) {
    farm::ChildProcess tune(
        {"setsid", "sh", "-c", std::string("exec ") + KILN_BIN + " tune " + kTask +
                                   " --target host --tuner random --trials 100000 --log " + log},
        log + ".out");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const size_t start = line_count(log);
    while (line_count(log) < start + 8 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Mid-batch: the next batch is being built or measured now.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    ::kill(-tune.pid(), SIGINT);
    const int status = tune.wait_exit(60);
    const std::string out = farm::read_text(log + ".out");
    ASSERT_TRUE(WIFEXITED(status)) << out;
    EXPECT_EQ(WEXITSTATUS(status), 130) << out;
    EXPECT_NE(out.find("stopped"), std::string::npos) << out;
    EXPECT_EQ(out.find("CANCELLED"), std::string::npos) << out;
  }
  valid_log(log);
}

TEST(Tune, BadFlagsAndLogsAreOneLineAndExitTwo) {
  TempDir dir("kiln-tune-test");
  const std::string bad_log = dir.file("bad.jsonl");
  std::ofstream(bad_log) << "{\"v\":1}\n";
  const std::vector<std::string> cases = {
      "tune --op dense --shape 8,8,8 --trials 4",                                  // no --log
      "tune --op dense --shape 8,8,8 --log x.jsonl --tuner annealing",             // unknown tuner
      "tune --op dense --shape 8,8,8 --log x.jsonl --trials 0",                    // no trials
      "tune --op dense --shape 8,8 --log x.jsonl",                                 // bad shape
      "tune --op dense --shape 8,8,8 --log x.jsonl --target riscv",                // bad target
      "tune --op dense --shape 8,8,8 --log x.jsonl --farm 127.0.0.1:1",            // no key
      "tune --op dense --shape 8,8,8 --log x.jsonl --template conv2d.nchwc",       // wrong op
      "tune --op dense --shape 8,8,8 --log x.jsonl --batch 0",                     // bad batch
      "records summary " + bad_log + "-missing",                                   // no such log
  };
  for (const std::string& c : cases) {
    Output o = run(c);
    EXPECT_TRUE(WIFEXITED(o.status)) << c;
    EXPECT_EQ(WEXITSTATUS(o.status), 2) << c << "\n" << o.text;
    EXPECT_EQ(std::count(o.text.begin(), o.text.end(), '\n'), 1) << c << "\n" << o.text;
  }
}

}  // namespace
}  // namespace kiln::tools
