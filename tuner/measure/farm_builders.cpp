#include "tuner/measure/farm_builders.h"

#include <chrono>
#include <optional>

#include "runtime/process/file_bytes.h"
#include "runtime/process/machine.h"
#include "runtime/process/temp_dir.h"
#include "schedules/registry.h"
#include "tuner/builder.h"
#include "tuner/isolated_compile.h"
#include "tuner/measure/cancel_on_stop.h"
#include "tuner/measure/farm_wire.h"

namespace kiln::tuner {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

farm::pb::Result failed(farm::pb::Result r, farm::pb::ErrorKind kind, const std::string& message) {
  r.set_error(kind);
  r.set_message(message);
  return r;
}

// The farm's error kinds carry a build's outcome back: BUILD_ERROR is a compile error, TIMEOUT
// a compile past its limit, INVALID_JOB a candidate that does not instantiate; the message
// starts with the kind's record name so nothing is guessed on the way back.
MeasureErrorKind build_error_of(const farm::pb::Result& r) {
  switch (r.error()) {
    case farm::pb::BUILD_ERROR:
      return MeasureErrorKind::CompileError;
    case farm::pb::TIMEOUT:
      return MeasureErrorKind::CompileTimeout;
    case farm::pb::INVALID_JOB:
      return r.message().rfind("instantiation: ", 0) == 0 ? MeasureErrorKind::InstantiationError
                                                          : MeasureErrorKind::InvalidJob;
    default:
      return measure_error_of(r.error());
  }
}

}  // namespace

FarmBuilders::FarmBuilders(std::string address, std::string token, std::string key,
                           std::string tls_ca)
    : client_(std::move(address), std::move(token), std::move(tls_ca)), key_(std::move(key)) {}

std::vector<BuildOutput> FarmBuilders::build(const std::vector<BuildInput>& inputs,
                                             double timeout_s, const std::atomic<bool>& stop) {
  std::vector<BuildOutput> out(inputs.size());
  if (inputs.empty()) return out;
  std::vector<farm::pb::Job> jobs;
  for (const BuildInput& in : inputs) {
    farm::pb::Job job;
    job.mutable_build()->set_candidate(record_to_json(in.candidate));
    job.mutable_build()->set_entry(in.entry);
    job.set_timeout_s(timeout_s);
    jobs.push_back(std::move(job));
  }
  std::unique_ptr<farm::Batch> batch = client_.submit(key_, std::move(jobs));
  const CancelOnStop cancel({batch.get()}, stop);
  farm::pb::Result r;
  while (batch->next(&r)) {
    if (r.index() >= out.size()) continue;
    BuildOutput& o = out[r.index()];
    if (r.error() == farm::pb::OK && r.outputs_size() == 1) {
      o.so.assign(r.outputs(0).begin(), r.outputs(0).end());
      ++built_;
    } else {
      o.error = r.error() == farm::pb::OK ? MeasureErrorKind::InvalidJob : build_error_of(r);
      o.message = r.error() == farm::pb::OK ? "the builder sent no .so back"
                                            : r.message() + " (builder " + r.worker_id() + ")";
    }
  }
  return out;
}

farm::pb::Result run_build_job(const farm::pb::Job& job, const std::atomic<bool>& cancel) {
  farm::pb::Result r;
  r.set_job_id(job.job_id());
  r.set_index(job.index());
  r.set_start_time(unix_seconds());
  const MachineIdentity& m = this_machine();
  r.mutable_machine()->set_vendor(m.vendor);
  r.mutable_machine()->set_model(m.model);
  r.mutable_machine()->set_cores(m.cores);
  r.mutable_machine()->set_kiln(kiln_version());
  auto finish = [&](farm::pb::Result res) {
    res.set_end_time(unix_seconds());
    return res;
  };
  if (!job.has_build())
    return finish(failed(r, farm::pb::INVALID_JOB,
                         "a measurement reached a builder: a builder only compiles candidates"));
  if (cancel) return finish(failed(r, farm::pb::CANCELLED, "cancelled"));
  ParsedRecord parsed = parse_record(job.build().candidate());
  if (!parsed.record)
    return finish(failed(r, farm::pb::INVALID_JOB, "build.candidate: " + parsed.error));
  const TuningRecord& c = *parsed.record;
  std::optional<BuiltKernel> kernel;
  try {
    kernel = lower_template(schedules::template_named(c.template_name), c.workload, c.target,
                            c.config, job.build().entry());
  } catch (const std::exception& e) {
    return finish(failed(r, farm::pb::INVALID_JOB, std::string("instantiation: ") + e.what()));
  }
  TempDir dir("kiln-builder");
  const std::string so = dir.file("candidate.so");
  const double timeout_s = job.timeout_s() > 0 ? job.timeout_s() : 60;
  IsolatedCompile built = compile_isolated(kernel->func, c.target, so, timeout_s);
  if (built.error == MeasureErrorKind::CompileTimeout)
    return finish(failed(r, farm::pb::TIMEOUT, built.message));
  if (built.error != MeasureErrorKind::Ok)
    return finish(failed(r, farm::pb::BUILD_ERROR, built.message));
  const Bytes bytes = read_file_bytes<Bytes>(so);
  r.add_outputs(bytes.data(), bytes.size());
  r.set_error(farm::pb::OK);
  return finish(r);
}

}  // namespace kiln::tuner
