// Spawning and reaping farm processes for the tests; fixture jobs and references.
#include "tests/farm/farm_harness.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "rpc/farm/data.h"
#include "runtime/process/file_bytes.h"

namespace kiln::farm::testing {

namespace fs = std::filesystem;

std::vector<uint8_t> read_binary(const std::string& path) {
  return read_file_bytes<std::vector<uint8_t>>(path);
}

DirectWorker::DirectWorker(const std::vector<std::string>& extra) {
  token_ = "direct-token-" + std::to_string(getpid()) + "-" + fs::path(dir_).filename().string();
  const std::string token_file = dir_ + "/farm.token";
  write_file_bytes(token_file, token_ + "\n");
  std::vector<std::string> argv = {KILN_WORKER, "--listen", "127.0.0.1:0", "--token-file",
                                   token_file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string log = dir_ + "/worker.log";
  process_ = std::make_unique<Process>(argv, log, std::vector<std::string>{"TMPDIR=" + dir_});
  address_ = wait_listening(log, 10);
}

DirectWorker::~DirectWorker() {
  process_.reset();
}

pb::Job fixture_job(const std::string& entry, int64_t n, uint64_t seed, bool with_reference,
                    double timeout_s) {
  static const std::vector<uint8_t> so = read_binary(KILN_FARM_FIXTURE);
  return fixture_job_of(so, entry, n, seed, with_reference, timeout_s);
}

pb::Job fixture_job_of(const std::vector<uint8_t>& so, const std::string& entry, int64_t n,
                       uint64_t seed, bool with_reference, double timeout_s) {
  pb::Job job;
  job.set_so(so.data(), so.size());
  job.set_entry(entry);
  job.set_seed(seed);
  job.set_number(1);
  job.set_repeat(3);
  job.set_timeout_s(timeout_s);
  pb::Arg* size = job.add_args();
  size->set_dtype(pb::I64);
  size->add_shape(1);
  size->set_data(&n, sizeof n);
  pb::Arg* in = job.add_args();
  in->set_dtype(pb::F32);
  in->add_shape(n);
  pb::Arg* out = job.add_args();
  out->set_dtype(pb::F32);
  out->add_shape(n);
  out->set_is_output(true);
  if (with_reference) {
    const std::vector<uint8_t> input = fill_arg(*in, seed, 1);
    std::vector<float> want(static_cast<std::size_t>(n));
    std::memcpy(want.data(), input.data(), want.size() * sizeof(float));
    for (float& v : want) v += 1.0f;
    job.mutable_check()->add_reference(want.data(), want.size() * sizeof(float));
    job.mutable_check()->set_rtol(1e-5);
    }
  return job;
}

}  // namespace kiln::farm::testing
