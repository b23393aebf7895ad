// The tracker's check of a Submit request (rpc/farm/validate.h validate_submit): what the
// service refuses before anything is queued, each refusal naming the field.
#include <gtest/gtest.h>

#include "rpc/farm/validate.h"

namespace kiln::farm {
namespace {

pb::Job good_job() {
  pb::Job job;
  job.set_so("so");
  job.set_entry("k");
  job.set_repeat(1);
  job.set_timeout_s(1);
  pb::Arg* out = job.add_args();
  out->set_dtype(pb::F32);
  out->add_shape(4);
  out->set_is_output(true);
  return job;
}

pb::SubmitRequest request_of(int jobs, const std::string& key = "host") {
  pb::SubmitRequest req;
  req.set_key(key);
  for (int i = 0; i < jobs; ++i) *req.add_jobs() = good_job();
  return req;
}

TEST(ValidateSubmit, AWellFormedBatchPasses) {
  EXPECT_EQ(validate_submit(request_of(3)), "");
}

TEST(ValidateSubmit, KeyMustBeGivenAndShort) {
  EXPECT_NE(validate_submit(request_of(1, "")).find("key:"), std::string::npos);
  EXPECT_NE(validate_submit(request_of(1, std::string(kMaxKeyChars + 1, 'k'))).find("key:"),
            std::string::npos);
  EXPECT_EQ(validate_submit(request_of(1, std::string(kMaxKeyChars, 'k'))), "");
}

TEST(ValidateSubmit, BatchSizeIsBounded) {
  EXPECT_NE(validate_submit(request_of(0)).find("jobs: a batch holds 1 to"), std::string::npos);
  EXPECT_NE(validate_submit(request_of(kMaxJobsPerBatch + 1)).find("not 10001"), std::string::npos);
}

TEST(ValidateSubmit, TheFirstBadJobIsNamedByIndex) {
  pb::SubmitRequest req = request_of(4);
  req.mutable_jobs(2)->set_repeat(0);
  req.mutable_jobs(3)->clear_entry();
  EXPECT_EQ(validate_submit(req), "jobs[2]: repeat: must be in [1, 10000]");
}

TEST(ValidateJob, BuffersAreBoundedOneByOneAndTogether) {
  pb::Job job = good_job();
  job.mutable_args(0)->set_shape(0, (kMaxArgBytes / 4) + 1);  // one f32 past 1 GiB
  EXPECT_NE(validate_job(job).find("more than 1 GiB"), std::string::npos);
  // Five buffers of 1 GiB each are each fine, but not together: the worker fills them all.
  job = good_job();
  job.mutable_args(0)->set_shape(0, kMaxArgBytes / 4);
  for (int i = 0; i < 4; ++i) *job.add_args() = job.args(0);
  EXPECT_EQ(validate_job(job).rfind("args[4]: the buffers up to this one hold 5120 MiB", 0), 0u)
      << validate_job(job);
  job.mutable_args()->RemoveLast();
  EXPECT_EQ(validate_job(job), "");
}

}  // namespace
}  // namespace kiln::farm
