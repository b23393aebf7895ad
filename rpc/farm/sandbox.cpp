// Spawning, watching and reading back the sandbox child, for a kernel job or a model job.
#include "rpc/farm/sandbox.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "rpc/farm/data.h"
#include "rpc/farm/transport.h"
#include "rpc/farm/validate.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/machine.h"
#include "runtime/process/temp_dir.h"


namespace kiln::farm {
namespace {

namespace fs = std::filesystem;

std::string tail(std::string s, std::size_t n = 2000) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > n ? "..." + s.substr(s.size() - n) : s;
}

pb::Result fail(pb::Result r, pb::ErrorKind kind, const std::string& message) {
  r.set_error(kind);
  r.set_message(message);
  return r;
}

// This machine as a result names it. Under an emulator (a prefix such as qemu-aarch64) the
// host's features say nothing of the emulated CPU's, so none are named.
pb::Machine machine_of(const SandboxConfig& config) {
  const MachineIdentity& m = this_machine();
  pb::Machine out;
  out.set_vendor(m.vendor);
  out.set_model(m.model);
  out.set_cores(m.cores);
  out.set_kiln(kiln_version());
  if (!config.prefix.empty())
    out.set_emulator(fs::path(config.prefix.front()).filename().string());
  else
    for (const std::string& f : m.features) out.add_features(f);
  return out;
}

}  // namespace

std::string default_sandbox_helper(const std::string& fallback) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "kiln-kernel-runner";
    if (access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return fallback;
}

pb::Result run_in_sandbox(const pb::Job& job, const SandboxConfig& config,
                          const std::atomic<bool>& cancel) {
  pb::Result r;
  r.set_job_id(job.job_id());
  r.set_index(job.index());
  r.set_start_time(unix_now());
  *r.mutable_machine() = machine_of(config);
  auto finish = [&](pb::Result res) {
    res.set_end_time(unix_now());
    return res;
  };
  if (const std::string why = validate_job(job); !why.empty()) {
    return finish(fail(r, pb::INVALID_JOB, why));
  }
  if (job.has_build())
    return finish(fail(r, pb::INVALID_JOB,
                       "a build job reached a measuring worker: builds go to workers started "
                       "with `kiln worker --role builder`"));
  try {
    // The job for the kernel runner: the .so as a file, inputs filled as data.h describes,
    // outputs zeroed.
    TempDir dir("kiln-farm");
    RunnerInvocation run;
    run.prefix = config.prefix;
    run.runner = config.helper;
    run.so_path = dir.file(job.has_model() ? "model.so" : "kernel.so");
    write_file_bytes(run.so_path, job.so());
    run.fn = job.entry();
    run.threads = static_cast<int>(std::max<uint32_t>(1, job.threads()));
    run.repeat = static_cast<int>(job.repeat());
    run.number = static_cast<int>(std::max<uint32_t>(1, job.number()));
    run.min_repeat_ms = job.min_repeat_ms();
    run.cooldown_ms = job.cooldown_ms();
    run.flush_cache = job.flush_cache();
    run.mem_mb = config.mem_mb;
    run.timeout_s = job.timeout_s();
    if (job.has_model()) {
      // A compiled model: the runner loads model.so + model.params as a board would.
      const pb::ModelRun& model = job.model();
      run.params_path = dir.file("model.params");
      write_file_bytes(run.params_path, model.params());
      for (const std::string& in : model.inputs()) run.args.emplace_back(in.begin(), in.end());
      for (uint32_t k = 0; k < model.outputs(); ++k) run.output_indices.push_back(static_cast<int>(k));
      run.warmup = static_cast<int>(model.warmup());
      run.threads = static_cast<int>(job.threads());  // 0: the board's default, as kiln run's
    }
    for (int i = 0; i < job.args_size(); ++i) {
      run.args.push_back(fill_arg(job.args(i), job.seed(), i));
      if (job.args(i).is_output()) run.output_indices.push_back(i);
    }
    const RunnerResult ran = invoke_kernel_runner(run, &cancel);
    const std::string err = tail(ran.stderr_text);
    if (ran.end == RunnerResult::End::kTimedOut) {
      return finish(
          fail(r, pb::TIMEOUT,
               "ran past its timeout of " + std::to_string(job.timeout_s()) + " s and was killed"));
    }
    if (ran.end == RunnerResult::End::kCancelled) return finish(fail(r, pb::CANCELLED, "cancelled"));
    if (WIFSIGNALED(ran.status))
      return finish(fail(r, pb::RUNTIME_ERROR, ran.describe() + (err.empty() ? "" : ": " + err)));
    const int code = WIFEXITED(ran.status) ? WEXITSTATUS(ran.status) : -1;
    if (code == kRunnerExitLoad) return finish(fail(r, pb::BUILD_ERROR, err));
    if (code == kRunnerExitUsage) return finish(fail(r, pb::INVALID_JOB, err));
    if (!ran.ok()) return finish(fail(r, pb::RUNTIME_ERROR, ran.describe() + ": " + err));
    for (double c : ran.costs_s) r.add_costs(c);
    r.set_number(ran.number);
    if (job.has_model()) {
      for (const std::vector<uint8_t>& out : ran.outputs) r.add_outputs(std::string(out.begin(), out.end()));
      return finish(r);
    }
    for (int i = 0, k = 0; i < job.args_size(); ++i) {
      if (!job.args(i).is_output()) continue;
      const std::vector<uint8_t>& bytes = ran.outputs.at(k);
      const std::string out(bytes.begin(), bytes.end());
      if (job.check().reference_size() > 0) {
        const std::string why =
            compare_outputs(job.args(i).dtype(), bytes,
                            job.check().reference(k), job.check().rtol());
        if (!why.empty() && r.error() == pb::OK) {
          r.set_error(pb::WRONG_RESULT);
          r.set_message("output argument " + std::to_string(i) + ": " + why);
        }
      }
      if (job.check().return_outputs()) r.add_outputs(out);
      ++k;
    }
    return finish(r);
  } catch (const std::exception& e) {
    return finish(fail(r, pb::RUNTIME_ERROR, std::string("worker: ") + e.what()));
  }
}

}  // namespace kiln::farm
