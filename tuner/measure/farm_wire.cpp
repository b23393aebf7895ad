#include "tuner/measure/farm_wire.h"

#include <limits>
#include <stdexcept>

namespace kiln::tuner {
namespace {

farm::pb::DType wire_dtype(ir::DataType t) {
  if (t == ir::DataType::f32()) return farm::pb::F32;
  if (t == ir::DataType::f16()) return farm::pb::F16;
  if (t == ir::DataType::bf16()) return farm::pb::BF16;
  if (t == ir::DataType::f64()) return farm::pb::F64;
  if (t == ir::DataType::i16()) return farm::pb::I16;
  if (t == ir::DataType::i32()) return farm::pb::I32;
  if (t == ir::DataType::i64()) return farm::pb::I64;
  if (t == ir::DataType::i8()) return farm::pb::I8;
  if (t == ir::DataType::u8()) return farm::pb::U8;
  throw std::runtime_error("no wire format for element type " + t.str());
}

}  // namespace

farm::pb::Job to_farm_job(const MeasureInput& in) {
  farm::pb::Job job;
  job.set_so(in.so.data(), in.so.size());
  job.set_entry(in.entry);
  job.set_number(in.options.number);
  job.set_repeat(in.options.repeat);
  job.set_min_repeat_ms(in.options.min_repeat_ms);
  job.set_timeout_s(in.options.timeout_s);
  job.set_threads(in.options.threads);
  job.set_flush_cache(in.options.flush_cache);
  job.mutable_check()->set_return_outputs(true);
  // No reference and an infinite tolerance: the farm's own comparison is off (NaN still
  // differs), the tuner judges the outputs.
  job.mutable_check()->set_rtol(std::numeric_limits<double>::infinity());
  for (const KernelArgument& a : in.args) {
    farm::pb::Arg* arg = job.add_args();
    arg->set_dtype(wire_dtype(a.dtype));
    arg->add_shape(a.elements);
    // Outputs travel without data: the worker zeroes them.
    if (a.is_output)
      arg->set_is_output(true);
    else
      arg->set_data(a.data.data(), a.data.size());
  }
  return job;
}

RunResult from_farm_result(const farm::pb::Result& r) {
  RunResult out;
  out.error = measure_error_of(r.error());
  out.message = r.message();
  out.costs.assign(r.costs().begin(), r.costs().end());
  for (const std::string& o : r.outputs()) out.outputs.emplace_back(o.begin(), o.end());
  const farm::pb::Machine& m = r.machine();
  out.machine.vendor = m.vendor();
  out.machine.model = m.model();
  out.machine.features.assign(m.features().begin(), m.features().end());
  out.machine.cores = m.cores();
  out.machine.kiln = m.kiln();
  out.machine.emulator = m.emulator();
  return out;
}

MeasureErrorKind measure_error_of(farm::pb::ErrorKind kind) {
  switch (kind) {
    case farm::pb::OK:
      return MeasureErrorKind::Ok;
    case farm::pb::BUILD_ERROR:  // the .so did not load on the device
    case farm::pb::RUNTIME_ERROR:
      return MeasureErrorKind::RuntimeError;
    case farm::pb::TIMEOUT:
      return MeasureErrorKind::RunTimeout;
    case farm::pb::WRONG_RESULT:
      return MeasureErrorKind::WrongResult;
    case farm::pb::WORKER_LOST:
      return MeasureErrorKind::WorkerLost;
    case farm::pb::CANCELLED:
      return MeasureErrorKind::Cancelled;
    default:
      return MeasureErrorKind::InvalidJob;
  }
}

}  // namespace kiln::tuner
