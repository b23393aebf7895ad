// Measurement job validation.
#include "rpc/farm/validate.h"

#include <cmath>

#include "rpc/farm/data.h"

namespace kiln::farm {

namespace {

// The fields every job shares: how often and how long it runs.
std::string validate_timing(const pb::Job& job) {
  if (job.repeat() < 1 || job.repeat() > 10000) return "repeat: must be in [1, 10000]";
  if (job.number() > 1000000) return "number: at most 1000000";
  if (!(job.timeout_s() > 0) || job.timeout_s() > kMaxTimeoutS) {
    return "timeout_s: must be in (0, 3600]";
  }
  if (!(job.min_repeat_ms() >= 0) || job.min_repeat_ms() > 60000) {
    return "min_repeat_ms: must be in [0, 60000]";
  }
  if (!(job.cooldown_ms() >= 0) || job.cooldown_ms() > 60000) {
    return "cooldown_ms: must be in [0, 60000]";
  }
  if (job.threads() > 1024) return "threads: at most 1024";
  return "";
}

std::string validate_model_job(const pb::Job& job) {
  const pb::ModelRun& m = job.model();
  if (job.so().empty()) return "so: model.so is empty";
  if (!job.entry().empty() || job.args_size() > 0) {
    return "model: a model job has no entry and no args (its inputs are model.inputs)";
  }
  if (m.params().empty()) return "model.params: model.params is empty";
  if (m.inputs_size() > kMaxArgs) {
    return "model.inputs: " + std::to_string(m.inputs_size()) + " inputs, at most " +
           std::to_string(kMaxArgs);
  }
  int64_t total = 0;
  for (const std::string& in : m.inputs()) total += static_cast<int64_t>(in.size());
  if (total > kMaxJobArgBytes) return "model.inputs: more than 4 GiB in all";
  if (m.outputs() < 1 || m.outputs() > static_cast<uint32_t>(kMaxArgs)) {
    return "model.outputs: must be in [1, " + std::to_string(kMaxArgs) + "]";
  }
  if (m.warmup() > 10000) return "model.warmup: at most 10000";
  return validate_timing(job);
}

}  // namespace

std::string validate_job(const pb::Job& job) {
  if (job.has_model()) return validate_model_job(job);
  if (job.has_build()) {
    if (job.build().candidate().empty()) return "build.candidate: no candidate to build";
    if (job.build().candidate().size() > (1 << 20)) return "build.candidate: over 1 MiB";
    if (job.build().entry().empty()) return "build.entry: no kernel name given";
    return "";
  }
  if (job.so().empty()) return "so: the kernel shared object is empty";
  if (job.entry().empty()) return "entry: no kernel name given";
  if (job.args_size() == 0) return "args: a kernel takes at least one buffer";
  if (job.args_size() > kMaxArgs) {
    return "args: " + std::to_string(job.args_size()) + " arguments, at most " +
           std::to_string(kMaxArgs);
  }
  int outputs = 0;
  int64_t total = 0;
  for (int i = 0; i < job.args_size(); ++i) {
    const pb::Arg& a = job.args(i);
    const std::string where = "args[" + std::to_string(i) + "]: ";
    if (dtype_size(a.dtype()) == 0) return where + "unknown dtype " + dtype_name(a.dtype());
    const int64_t bytes = arg_bytes(a, kMaxArgBytes);
    if (bytes < 0) return where + "negative dimension or more than 1 GiB";
    total += bytes;
    if (total > kMaxJobArgBytes) {
      return where + "the buffers up to this one hold " + std::to_string(total >> 20) +
             " MiB, more than the " + std::to_string(kMaxJobArgBytes >> 20) +
             " MiB a job may use in all";
    }
    if (!a.data().empty() && static_cast<int64_t>(a.data().size()) != bytes) {
      return where + "data has " + std::to_string(a.data().size()) + " bytes, its shape " +
             std::to_string(bytes);
    }
    if (a.is_output()) {
      if (job.check().reference_size() > 0) {
        if (outputs >= job.check().reference_size()) return where + "output has no reference";
        if (static_cast<int64_t>(job.check().reference(outputs).size()) != bytes) {
          return where + "reference has " + std::to_string(job.check().reference(outputs).size()) +
                 " bytes, the output " + std::to_string(bytes);
        }
      }
      ++outputs;
    }
  }
  if (job.check().reference_size() > 0 && job.check().reference_size() != outputs) {
    return "check.reference: " + std::to_string(job.check().reference_size()) + " references for " +
           std::to_string(outputs) + " outputs";
  }
  if (!(job.check().rtol() >= 0)) {
    return "check: rtol must be >= 0";
  }
  return validate_timing(job);
}

std::string validate_submit(const pb::SubmitRequest& request) {
  if (request.key().empty() || request.key().size() > kMaxKeyChars) {
    return "key: a device key of 1 to " + std::to_string(kMaxKeyChars) + " characters";
  }
  if (request.jobs_size() == 0 || request.jobs_size() > kMaxJobsPerBatch) {
    return "jobs: a batch holds 1 to " + std::to_string(kMaxJobsPerBatch) + " jobs, not " +
           std::to_string(request.jobs_size());
  }
  for (int i = 0; i < request.jobs_size(); ++i) {
    const std::string why = validate_job(request.jobs(i));
    if (!why.empty()) return "jobs[" + std::to_string(i) + "]: " + why;
  }
  return "";
}

}  // namespace kiln::farm
