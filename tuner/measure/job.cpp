#include "tuner/measure/job.h"

#include "tuner/host_values.h"
#include "tuner/measure/repeats.h"

#include <stdexcept>

namespace kiln::tuner {
namespace {

ir::DataType arg_dtype(const BuiltKernel& k, size_t i) {
  return k.func.args.at(i)->dtype;
}

// The type random logical values are drawn in: the argument's, unless packing widens it.
ir::DataType values_dtype(const BuiltKernel& k, size_t i) {
  const ir::DataType t = k.args.at(i).logical_dtype;
  return t.is_handle() ? arg_dtype(k, i) : t;
}

// The run-time sizes' argument: the workload's values of those params, as i64.
Bytes encode_sizes(const schedules::KernelArg& a, const schedules::Workload& w) {
  Bytes out;
  for (const std::string& d : a.run_time_sizes) {
    const int64_t v = w.param(d);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  }
  return out;
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
    if (k.args[i].is_output || !k.args[i].run_time_sizes.empty()) continue;
    set.inputs.push_back(random_values(k.args[i].logical.elements(), seed++, values_dtype(k, i)));
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
    if (!a.run_time_sizes.empty()) {
      out.push_back(encode_sizes(a, data.workload()));
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

MeasureInput make_input(const BuiltKernel& k, const std::vector<uint8_t>& so, TaskData& data,
                        const MeasureOptions& o) {
  std::vector<Bytes> args = kernel_arguments(k, data);
  MeasureInput in;
  in.so = so;
  in.entry = k.func.name;
  in.options = o;
  // More repeats for a kernel that runs on several threads (tuner/measure/repeats.h).
  in.options.repeat = repeats_for_threads(o.repeat, candidate_threads(k.func, o.threads));
  for (size_t i = 0; i < k.args.size(); ++i) {
    KernelArgument a;
    a.dtype = arg_dtype(k, i);
    a.elements = k.args[i].kernel_elements;
    a.is_output = k.args[i].is_output;
    if (!a.is_output) a.data = std::move(args[i]);
    in.args.push_back(std::move(a));
  }
  return in;
}

Judgement judge(const RunResult& r, const BuiltKernel& k, TaskData& data, double rtol) {
  Judgement j;
  j.error = r.error;
  j.message = r.message;
  j.costs = r.costs;
  if (!r.ok()) return j;
  if (r.outputs.size() != 1) {
    j.error = MeasureErrorKind::InvalidJob;
    j.message = "the result carries " + std::to_string(r.outputs.size()) + " outputs, expected 1";
    return j;
  }
  Comparison c = compare_output(k, data, r.outputs[0], rtol);
  if (!c.close) {
    j.error = MeasureErrorKind::WrongResult;
    j.message = c.message();
    return j;
  }
  j.correct = true;
  return j;
}

}  // namespace kiln::tuner
