#include "tuner/measure/job.h"

#include "tuner/host_values.h"
#include "tuner/measure/repeats.h"

#include <limits>
#include <stdexcept>

namespace kiln::tuner {
namespace {

farm::pb::DType wire_dtype(ir::DataType t) {
  if (t == ir::DataType::f32()) return farm::pb::F32;
  if (t == ir::DataType::f16()) return farm::pb::F16;
  if (t == ir::DataType::bf16()) return farm::pb::BF16;
  if (t == ir::DataType::f64()) return farm::pb::F64;
  if (t == ir::DataType::i32()) return farm::pb::I32;
  if (t == ir::DataType::i64()) return farm::pb::I64;
  if (t == ir::DataType::i8()) return farm::pb::I8;
  if (t == ir::DataType::u8()) return farm::pb::U8;
  throw std::runtime_error("no wire format for element type " + t.str());
}

ir::DataType arg_dtype(const BuiltKernel& k, size_t i) {
  return k.func.args.at(i)->dtype;
}

}  // namespace

const TaskData::Set& TaskData::for_kernel(const BuiltKernel& k) {
  std::vector<std::string> key;
  for (size_t i = 0; i < k.args.size(); ++i) key.push_back(arg_dtype(k, i).str());
  auto it = sets_.find(key);
  if (it != sets_.end()) return it->second;
  Set set;
  uint32_t seed = seed_;
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (k.args[i].is_output) continue;
    set.inputs.push_back(random_values(k.args[i].logical.elements(), seed++, arg_dtype(k, i)));
  }
  set.reference = tpl_->reference(w_, set.inputs);
  ir::DataType out = arg_dtype(k, k.args.size() - 1);
  for (float& x : set.reference) x = round_to(x, out);
  return sets_.emplace(key, std::move(set)).first->second;
}

std::vector<Bytes> kernel_arguments(const BuiltKernel& k, TaskData& data) {
  if (k.func.args.size() != k.args.size())
    throw std::runtime_error("kernel " + k.func.name + " has " + std::to_string(k.func.args.size()) +
                             " buffers but its template describes " + std::to_string(k.args.size()));
  const TaskData::Set& set = data.for_kernel(k);
  std::vector<Bytes> out;
  size_t input = 0;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const schedules::KernelArg& a = k.args[i];
    if (a.is_output) {
      out.emplace_back(static_cast<size_t>(a.kernel_elements) * arg_dtype(k, i).bytes(), 0);
      continue;
    }
    const Values& logical = set.inputs.at(input++);
    Values packed = a.pack ? a.pack(logical) : logical;
    if (static_cast<int64_t>(packed.size()) != a.kernel_elements)
      throw std::runtime_error("argument " + a.logical.name + " packs to " +
                               std::to_string(packed.size()) + " elements, the kernel expects " +
                               std::to_string(a.kernel_elements));
    out.push_back(encode(packed, arg_dtype(k, i)));
  }
  return out;
}

Comparison compare_output(const BuiltKernel& k, TaskData& data, const Bytes& raw, double rtol) {
  Values got = decode(raw, arg_dtype(k, k.args.size() - 1));
  if (k.args.back().unpack) got = k.args.back().unpack(got);
  return compare(got, data.for_kernel(k).reference, rtol);
}

farm::pb::Job make_job(const BuiltKernel& k, const std::vector<uint8_t>& so, TaskData& data,
                       const MeasureOptions& o) {
  std::vector<Bytes> args = kernel_arguments(k, data);
  farm::pb::Job job;
  job.set_so(so.data(), so.size());
  job.set_entry(k.func.name);
  job.set_number(o.number);
  // More repeats for a kernel that runs on several threads (tuner/measure/repeats.h).
  job.set_repeat(repeats_for_threads(o.repeat, candidate_threads(k.func, o.threads)));
  job.set_min_repeat_ms(o.min_repeat_ms);
  job.set_timeout_s(o.timeout_s);
  job.set_threads(o.threads);
  job.set_flush_cache(o.flush_cache);
  job.mutable_check()->set_return_outputs(true);
  // Returned outputs without a reference make the farm client compare each candidate's raw
  // output with the batch's first correct one. Candidates write their outputs in their own
  // layouts, though (a conv's output channel block is a knob), so that comparison would call
  // correct kernels wrong: judge() compares each output, unpacked, with the reference
  // instead, and an infinite tolerance turns the farm's comparison off (NaN still differs).
  job.mutable_check()->set_rtol(std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < k.args.size(); ++i) {
    farm::pb::Arg* arg = job.add_args();
    arg->set_dtype(wire_dtype(arg_dtype(k, i)));
    arg->add_shape(k.args[i].kernel_elements);
    // Outputs travel without data: the worker zeroes them.
    if (k.args[i].is_output)
      arg->set_is_output(true);
    else
      arg->set_data(args[i].data(), args[i].size());
  }
  return job;
}

Judgement judge(const farm::pb::Result& r, const BuiltKernel& k, TaskData& data, double rtol) {
  Judgement j;
  j.error = r.error();
  j.message = r.message();
  j.costs.assign(r.costs().begin(), r.costs().end());
  if (r.error() != farm::pb::OK) return j;
  if (r.outputs_size() != 1) {
    j.error = farm::pb::INVALID_JOB;
    j.message = "the result carries " + std::to_string(r.outputs_size()) + " outputs, expected 1";
    return j;
  }
  const std::string& raw = r.outputs(0);
  Comparison c = compare_output(k, data, Bytes(raw.begin(), raw.end()), rtol);
  if (!c.close) {
    j.error = farm::pb::WRONG_RESULT;
    j.message = c.message();
    return j;
  }
  j.correct = true;
  return j;
}

}  // namespace kiln::tuner
