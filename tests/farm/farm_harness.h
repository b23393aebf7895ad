// Test harness for the device farm: real tracker and worker processes on 127.0.0.1 with
// ephemeral ports, started with posix_spawn and always killed when the harness goes away,
// plus builders for jobs on the fixture kernels and their reference outputs.
#ifndef KILN_TESTS_FARM_HARNESS_H
#define KILN_TESTS_FARM_HARNESS_H

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "rpc/farm/client.h"
#include "rpc/farm/local_farm.h"

namespace kiln::farm::testing {

using Process = ChildProcess;
using farm::read_text;
std::vector<uint8_t> read_binary(const std::string& path);

// The local farm with this build's kiln (tracker) and kiln-worker.
class Farm : public LocalFarm {
 public:
  explicit Farm(double heartbeat_timeout_s = 5) : LocalFarm({KILN_BIN, "tracker"}, heartbeat_timeout_s) {}
  // Starts this build's kiln-worker for `key`; returns its index.
  std::size_t start_worker(const std::string& key, const std::vector<std::string>& extra = {}) {
    return LocalFarm::start_worker({KILN_WORKER}, key, extra);
  }
  // The same with another worker command, e.g. {"qemu-aarch64", ..., AARCH64_KILN_WORKER}.
  std::size_t start_worker_command(const std::vector<std::string>& command, const std::string& key,
                                   const std::vector<std::string>& extra = {}) {
    return LocalFarm::start_worker(command, key, extra);
  }
};

// A worker in direct mode (`kiln-worker --listen 127.0.0.1:0`, no tracker), killed with the
// object; `extra` is appended to its command line.
class DirectWorker {
 public:
  explicit DirectWorker(const std::vector<std::string>& extra = {});
  ~DirectWorker();
  const std::string& address() const { return address_; }
  const std::string& token() const { return token_; }
  std::string log() const { return read_text(dir_ + "/worker.log"); }

 private:
  TempDir scratch_{"kiln-farm-test"};
  std::string dir_ = scratch_.path(), token_, address_;
  std::unique_ptr<Process> process_;
};

// A job of the fixture module: (n: i64[1], in: f32[n] filled from `seed`, out: f32[n]),
// checked against in + 1 unless `with_reference` is false.
pb::Job fixture_job(const std::string& entry, int64_t n, uint64_t seed, bool with_reference = true,
                    double timeout_s = 10);
// The same for another build of the fixture module (e.g. cross-compiled for AArch64).
pb::Job fixture_job_of(const std::vector<uint8_t>& so, const std::string& entry, int64_t n,
                       uint64_t seed, bool with_reference = true, double timeout_s = 10);

}  // namespace kiln::farm::testing

#endif  // KILN_TESTS_FARM_HARNESS_H
