// The builder's side of a build job (tuner/measure/farm_builders.h) without a farm: a candidate
// in, a linked .so out; a candidate that does not instantiate and a build sent to a measuring
// worker come back as their error kinds, named.
#include "tuner/measure/farm_builders.h"

#include <gtest/gtest.h>

#include "rpc/farm/sandbox.h"
#include "tests/tuner/records_test_util.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;

farm::pb::Job build_job(const TuningRecord& candidate) {
  farm::pb::Job job;
  job.mutable_build()->set_candidate(record_to_json(candidate));
  job.mutable_build()->set_entry("kernel_7");
  job.set_timeout_s(60);
  return job;
}

TEST(FarmBuilders, ABuildJobGivesTheLinkedKernel) {
  DenseTask task;
  task.target = target_from_name("arm-neon");  // any target: an x86 builder builds AArch64
  TuningRecord candidate = task.record(0, {}, MeasureErrorKind::Cancelled);
  candidate.config = task.space().at(3);
  const std::atomic<bool> cancel = false;
  farm::pb::Result r = run_build_job(build_job(candidate), cancel);
  ASSERT_EQ(r.error(), farm::pb::OK) << r.message();
  ASSERT_EQ(r.outputs_size(), 1);
  const std::string& so = r.outputs(0);
  ASSERT_GT(so.size(), 64u);
  EXPECT_EQ(so.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(static_cast<unsigned char>(so[18]), 183u);  // e_machine: EM_AARCH64
  EXPECT_NE(so.find("kernel_7"), std::string::npos);
  EXPECT_FALSE(r.machine().model().empty());
}

TEST(FarmBuilders, ErrorsComeBackAsTheirKinds) {
  DenseTask task;
  const std::atomic<bool> cancel = false;
  TuningRecord bad = task.record(0, {}, MeasureErrorKind::Cancelled);
  bad.config.set("mr", 999);  // not a point of the space
  farm::pb::Result r = run_build_job(build_job(bad), cancel);
  EXPECT_EQ(r.error(), farm::pb::INVALID_JOB);
  EXPECT_EQ(r.message().rfind("instantiation: ", 0), 0u) << r.message();

  farm::pb::Job garbled = build_job(bad);
  garbled.mutable_build()->set_candidate("{not json");
  r = run_build_job(garbled, cancel);
  EXPECT_EQ(r.error(), farm::pb::INVALID_JOB);
  EXPECT_NE(r.message().find("build.candidate: malformed JSON"), std::string::npos) << r.message();

  // A build sent to a measuring worker, and a measurement to a builder, are refused by name.
  farm::SandboxConfig sandbox;
  r = farm::run_in_sandbox(build_job(task.record(0, {}, MeasureErrorKind::Cancelled)), sandbox,
                           cancel);
  EXPECT_EQ(r.error(), farm::pb::INVALID_JOB);
  EXPECT_NE(r.message().find("--role builder"), std::string::npos) << r.message();
  farm::pb::Job measurement;
  measurement.set_entry("k");
  r = run_build_job(measurement, cancel);
  EXPECT_EQ(r.error(), farm::pb::INVALID_JOB);
  EXPECT_NE(r.message().find("only compiles"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace kiln::tuner
