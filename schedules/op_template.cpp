#include "schedules/op_template.h"

#include <algorithm>
#include <sstream>

#include "compiler/base/error.h"

namespace kiln::schedules {

int64_t Workload::param(const std::string& name) const {
  auto it = params.find(name);
  user_check(it != params.end()) << op << ": missing shape parameter '" << name << "' in " << str();
  return it->second;
}

int64_t Workload::param_or(const std::string& name, int64_t fallback) const {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

bool Workload::has_epilogue(const std::string& e) const {
  return std::find(epilogue.begin(), epilogue.end(), e) != epilogue.end();
}

std::string Workload::str() const {
  std::ostringstream os;
  os << op;
  for (const auto& [k, v] : params) os << ' ' << k << '=' << v;
  os << ' ' << dtype.str();
  for (const std::string& e : epilogue) os << " +" << e;
  return os.str();
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

}  // namespace

std::vector<ir::DataType> OpTemplate::dtypes() const {
  return {ir::DataType::f32(), ir::DataType::f16(), ir::DataType::bf16()};
}

void OpTemplate::check(const Workload&, const Target&) const {}

ScheduledKernel OpTemplate::instantiate(const Workload& w, const Target& t,
                                        const Config& cfg) const {
  user_check(w.op == op()) << name() << " implements '" << op() << "', not '" << w.op << "'";
  const std::vector<ir::DataType> types = dtypes();
  std::vector<std::string> type_names;
  for (ir::DataType d : types) type_names.push_back(d.str());
  user_check(std::find(types.begin(), types.end(), w.dtype) != types.end())
      << w.op << ": dtype " << w.dtype.str() << " is not supported (valid: " << joined(type_names)
      << ")";
  const std::vector<std::string> steps = epilogues();
  for (const std::string& e : w.epilogue)
    user_check(contains(steps, e))
        << w.op << ": unknown epilogue '" << e << "' (valid: " << joined(steps) << ")";
  const std::vector<std::string> signed_ok = value_params();
  for (const auto& [k, v] : w.params)
    user_check(v >= 0 || contains(signed_ok, k))
        << w.op << ": shape parameter " << k << " = " << v << " is negative";
  check(w, t);
  space(w, t).validate(cfg);
  return schedule(w, t, cfg);
}

ScheduledKernel logical_kernel(te::Schedule schedule, std::vector<te::Tensor> tensors,
                               const std::vector<TensorSpec>& inputs, const TensorSpec& output,
                               double flops) {
  std::vector<KernelArg> args;
  for (const TensorSpec& s : inputs) args.push_back({s, false, nullptr, nullptr, s.elements()});
  args.push_back({output, true, nullptr, nullptr, output.elements()});
  return {std::move(schedule), std::move(tensors), std::move(args), flops};
}

}  // namespace kiln::schedules
