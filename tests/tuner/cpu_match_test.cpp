// Records keyed to the CPU that measured them: the machine field's text form, and the order in
// which a compile takes records (the deploy CPU's, then a CPU with the same features, then any,
// with a warning naming what it used; never a CPU that cannot run the target's code).
#include "tuner/cpu_match.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "runtime/process/machine.h"
#include "tests/tuner/records_test_util.h"
#include "tuner/history_best.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;

const std::vector<std::string> kAvx2 = {"avx", "fma", "f16c", "avx2"};

MeasuredOn cpu(const std::string& vendor, const std::string& model,
               std::vector<std::string> features = kAvx2) {
  MeasuredOn on;
  on.vendor = vendor;
  on.model = model;
  on.features = std::move(features);
  on.cores = 8;
  on.threads = 1;
  on.kiln = "0.45.0";
  return on;
}

const MeasuredOn kZen3 = cpu("AuthenticAMD", "AMD EPYC 7B13 (family 25, model 1)");
const MeasuredOn kZen3Twin = cpu("AuthenticAMD", "AMD Ryzen 9 5950X (family 25, model 33)");
const MeasuredOn kXeon = cpu("GenuineIntel", "Intel Xeon Platinum 8481C (family 6, model 143)",
                             {"avx", "fma", "f16c", "avx2", "avx512f", "avx512bw"});

struct Workloads {
  DenseTask a, b, c;
  Workloads() {
    b.workload.params["M"] = 32;
    c.workload.params["M"] = 16;
  }
};

TuningRecord on(TuningRecord r, const MeasuredOn& m) {
  r.result.measured_on = m;
  return r;
}

TEST(CpuMatch, TheMachineFieldRoundTripsAndIsOptional) {
  DenseTask task;
  TuningRecord r = on(task.record(1, {1e-5}), kXeon);
  r.result.measured_on.emulator = "qemu-aarch64";
  std::string line = record_to_json(r);
  ParsedRecord back = parse_record(line);
  ASSERT_TRUE(back.record) << back.error;
  const MeasuredOn& m = back.record->result.measured_on;
  EXPECT_EQ(m.vendor, kXeon.vendor);
  EXPECT_EQ(m.model, kXeon.model);
  EXPECT_EQ(m.features, kXeon.features);
  EXPECT_EQ(m.cores, 8u);
  EXPECT_EQ(m.threads, 1u);
  EXPECT_EQ(m.kiln, "0.45.0");
  EXPECT_EQ(m.cpu(), "qemu-aarch64 on " + kXeon.vendor + " " + kXeon.model);
  EXPECT_EQ(record_to_json(*back.record), line);

  // A record of an older kiln names no CPU.
  ParsedRecord old = parse_record(record_to_json(task.record(1, {1e-5})));
  ASSERT_TRUE(old.record) << old.error;
  EXPECT_FALSE(old.record->result.measured_on.known());
  EXPECT_EQ(old.record->result.measured_on.cpu(), "unknown CPU");
  EXPECT_EQ(record_to_json(task.record(1, {1e-5})).find("machine"), std::string::npos);

  // A machine without its model is a damaged record, named as such.
  std::string damaged = line;
  damaged.replace(damaged.find(kXeon.model), kXeon.model.size(), "");
  EXPECT_NE(parse_record(damaged).error.find("result.machine.model"), std::string::npos);
}

TEST(CpuMatch, ThisMachineIsNamed) {
  const MachineIdentity& m = this_machine();
  EXPECT_FALSE(m.vendor.empty());
  EXPECT_FALSE(m.model.empty());
  EXPECT_GT(m.cores, 0u);
  EXPECT_EQ(this_machine_measured_on().cpu(), m.vendor + " " + m.model);
  EXPECT_STRNE(kiln_version(), "unknown");
}

TEST(CpuMatch, AArch64CoresAreNamedFromTheirIdRegister) {
  EXPECT_EQ(aarch64_core(0x41, 0xd08).model, "Cortex-A72");
  EXPECT_EQ(aarch64_core(0x41, 0xd08).vendor, "ARM");
  EXPECT_EQ(aarch64_core(0x41, 0xd0c).model, "Neoverse-N1");
  EXPECT_EQ(aarch64_core(0x61, 0x022).vendor, "Apple");
  EXPECT_EQ(aarch64_core(0x61, 0x022).model, "part 0x022");
  EXPECT_EQ(aarch64_core(0x99, 0x001).vendor, "implementer 0x99");
}

// Config 2 is fastest on the Zen 3, config 5 on the Xeon: each CPU's compile takes its own.
TEST(CpuMatch, EachCpuTakesItsOwnRecordsFromAMergedLog) {
  DenseTask t;
  std::vector<TuningRecord> merged = {
      on(t.record(2, {1e-5}), kZen3), on(t.record(5, {3e-5}), kZen3),
      on(t.record(2, {4e-5}), kXeon), on(t.record(5, {0.5e-5}), kXeon)};
  // Every record competing, the Xeon's figure wins everywhere: what this issue is about.
  EXPECT_EQ(HistoryBest(merged).query(t.workload, t.target)->config, t.space().at(5));

  CpuChoice zen = choose_records_by_cpu(merged, t.target, "EPYC 7B13");
  EXPECT_EQ(zen.records.size(), 2u);
  EXPECT_EQ(HistoryBest(zen.records).query(t.workload, t.target)->config, t.space().at(2));
  EXPECT_NE(
      zen.report.find("records of " + kZen3.cpu() + " (--records-cpu EPYC 7B13) for 1 workloads"),
      std::string::npos)
      << zen.report;
  EXPECT_EQ(zen.report.find("warning"), std::string::npos) << zen.report;

  CpuChoice xeon = choose_records_by_cpu(merged, t.target, "xeon");  // any case
  EXPECT_EQ(HistoryBest(xeon.records).query(t.workload, t.target)->config, t.space().at(5));

  // "any" is the old rule: every record, nothing to report.
  CpuChoice any = choose_records_by_cpu(merged, t.target, "any");
  EXPECT_EQ(any.records.size(), merged.size());
  EXPECT_TRUE(any.report.empty());

  // "auto" on a named target: the CPU that measured most (here the Zen 3, with one more).
  merged.push_back(on(t.record(7, {9e-5}), kZen3));
  CpuChoice automatic = choose_records_by_cpu(merged, t.target, "auto");
  EXPECT_EQ(HistoryBest(automatic.records).query(t.workload, t.target)->config, t.space().at(2));
  EXPECT_NE(automatic.report.find("the CPU with the most records"), std::string::npos);

  // A name no record has is refused, listing the CPUs there are.
  try {
    choose_records_by_cpu(merged, t.target, "Cortex-A72");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("names no CPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(kXeon.model), std::string::npos) << e.what();
  }
}

TEST(CpuMatch, WorkloadsWithoutTheDeployCpusRecordsFallBackInOrderWithAWarning) {
  Workloads w;
  std::vector<TuningRecord> records = {
      on(w.a.record(1, {1e-5}), kZen3),
      // b: no Zen 3 record, but one of a CPU with the same features, and a faster Xeon one.
      on(w.b.record(2, {2e-5}), kZen3Twin), on(w.b.record(3, {0.1e-5}), kXeon),
      // c: only the Xeon and an old record that names no CPU.
      on(w.c.record(4, {2e-5}), kXeon), w.c.record(5, {3e-5})};
  CpuChoice c = choose_records_by_cpu(records, w.a.target, "7B13");
  HistoryBest best(c.records);
  EXPECT_EQ(best.query(w.a.workload, w.a.target)->config, w.a.space().at(1));
  EXPECT_EQ(best.query(w.b.workload, w.b.target)->config, w.b.space().at(2));  // the twin's
  EXPECT_EQ(best.query(w.c.workload, w.c.target)->config, w.c.space().at(4));  // any, fastest
  EXPECT_NE(
      c.report.find("warning: workloads without records of " + kZen3.cpu() +
                    " use those of a CPU with the same features: " + kZen3Twin.cpu() + " (1)"),
      std::string::npos)
      << c.report;
  EXPECT_NE(c.report.find("use those of another CPU: " + kXeon.cpu() + " (1)"), std::string::npos)
      << c.report;
  EXPECT_NE(c.report.find("note: 1 workloads use records that name no CPU"), std::string::npos)
      << c.report;
}

// `kiln tune --runner analyze` records serve only workloads nobody measured, and say so.
TEST(CpuMatch, PredictedRecordsServeOnlyWorkloadsWithoutMeasuredOnes) {
  Workloads w;
  MeasuredOn predicted;
  predicted.vendor = "predicted";
  predicted.model = "by llvm-mca with the haswell model";
  std::vector<TuningRecord> records = {
      // a: measured and predicted; the prediction claims a faster config.
      on(w.a.record(1, {1e-5}), kZen3), on(w.a.record(2, {0.1e-5}), predicted),
      // b: predicted only.
      on(w.b.record(3, {2e-5}), predicted)};
  for (const char* spec : {"auto", "any"}) {
    CpuChoice c = choose_records_by_cpu(records, w.a.target, spec);
    HistoryBest best(c.records);
    EXPECT_EQ(best.query(w.a.workload, w.a.target)->config, w.a.space().at(1)) << spec;
    EXPECT_EQ(best.query(w.b.workload, w.b.target)->config, w.b.space().at(3)) << spec;
    EXPECT_NE(c.report.find("note: 1 workloads use predicted times"), std::string::npos)
        << c.report;
    EXPECT_NE(c.report.find("note: 1 predicted records left out"), std::string::npos) << c.report;
  }
  // "auto" deploys on the measured CPU, not on the predictions though they are as many.
  EXPECT_NE(choose_records_by_cpu(records, w.a.target, "auto").report.find(kZen3.cpu()),
            std::string::npos);
}

TEST(CpuMatch, ARecordOfACpuThatCannotRunTheTargetsCodeIsNeverUsed) {
  DenseTask t;  // x86-avx2: needs avx2 and fma
  const MeasuredOn old_atom = cpu("GenuineIntel", "Intel Atom (family 6, model 55)", {"avx"});
  std::vector<TuningRecord> records = {on(t.record(1, {1e-7}), old_atom),
                                       on(t.record(2, {2e-5}), kZen3)};
  for (const char* spec : {"any", "auto"}) {
    CpuChoice c = choose_records_by_cpu(records, t.target, spec);
    EXPECT_EQ(HistoryBest(c.records).query(t.workload, t.target)->config, t.space().at(2)) << spec;
    EXPECT_NE(c.report.find("1 records for x86-avx2 ignored: their CPU cannot run its code (" +
                            old_atom.cpu() + " lacks "),
              std::string::npos)
        << c.report;
  }
  // An emulator's record names no features: it ran the code, emulated.
  MeasuredOn qemu = old_atom;
  qemu.emulator = "qemu-x86_64";
  qemu.features.clear();
  CpuChoice c = choose_records_by_cpu({on(t.record(1, {1e-7}), qemu)}, t.target, "any");
  EXPECT_EQ(c.records.size(), 1u);
}

TEST(CpuMatch, RecordsOfOtherTargetsPassThroughUntouched) {
  DenseTask avx2, host;
  host.target = host_target();
  std::vector<TuningRecord> records = {on(avx2.record(1, {1e-5}), kXeon),
                                       on(avx2.record(2, {1e-5}), kZen3)};
  // Compiling for the host: the x86-avx2 records are another target's, kept for the summary.
  CpuChoice c = choose_records_by_cpu(records, host.target, "auto");
  EXPECT_EQ(c.records.size(), 2u);
  EXPECT_TRUE(c.report.empty()) << c.report;
}

}  // namespace
}  // namespace kiln::tuner
