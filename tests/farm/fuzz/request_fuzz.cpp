// libFuzzer target for the farm's request validation: arbitrary bytes parsed as a Submit
// request (what a client sends the tracker, or a direct worker), checked by validate_submit
// (rpc/farm/validate.h) as the service does. Every accepted job then goes where a worker takes
// it: each argument's bytes filled (data.h fill_arg) and each output compared with its
// reference (compare_outputs), as the sandbox does around the kernel. Beyond "never crash",
// it checks that what validation accepts is what the worker can handle: sizes agree, and
// the worker's allocations stay within the limit validation promised.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "rpc/farm/data.h"
#include "rpc/farm/validate.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "farm_request_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// Argument buffers above this are only sized, not filled, to keep each run fast.
constexpr int64_t kFillAtMost = 1 << 20;

void run_like_a_worker(const kiln::farm::pb::Job& job) {
  using namespace kiln::farm;
  int output = 0;
  int64_t total = 0;
  for (int i = 0; i < job.args_size(); ++i) {
    const pb::Arg& arg = job.args(i);
    const int64_t bytes = arg_bytes(arg, kMaxArgBytes);
    if (bytes < 0 || bytes > kMaxArgBytes) fail("an accepted argument has no valid size", job.DebugString());
    total += bytes;
    if (total > kMaxJobArgBytes) fail("an accepted job needs more memory than allowed", job.DebugString());
    if (bytes > kFillAtMost) continue;
    const std::vector<uint8_t> filled = fill_arg(arg, job.seed(), static_cast<std::size_t>(i));
    if (static_cast<int64_t>(filled.size()) != bytes) {
      fail("fill_arg's size differs from arg_bytes", job.DebugString());
    }
    if (!arg.is_output()) continue;
    if (job.check().reference_size() > 0) {
      // The worker compares what the kernel left (here: the filled buffer) with the reference.
      compare_outputs(arg.dtype(), filled, job.check().reference(output), job.check().rtol());
    }
    ++output;
  }
}

}  // namespace

// Protobuf logs a line for every string field that is not UTF-8 (and then fails the parse):
// noise at fuzzing speed.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::farm::pb::SubmitRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const std::string why = kiln::farm::validate_submit(request);
  if (!why.empty()) return 0;
  for (const auto& job : request.jobs()) {
    if (!kiln::farm::validate_job(job).empty()) fail("validate_submit accepted a bad job", job.DebugString());
    run_like_a_worker(job);
  }
  return 0;
}
