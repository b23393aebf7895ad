#include "schedules/op_template.h"

#include <algorithm>
#include <sstream>

#include "compiler/base/error.h"
#include "schedules/validate.h"

namespace kiln::schedules {

int64_t Workload::param(const std::string& name) const {
  auto it = params.find(name);
  user_check(it != params.end()) << op << ": missing shape parameter '" << name << "' in " << str();
  return it->second.integer(op + " parameter '" + name + "'");
}

int64_t Workload::param_or(const std::string& name, int64_t fallback) const {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second.integer(op + " parameter '" + name + "'");
}

double Workload::real(const std::string& name) const {
  auto it = params.find(name);
  user_check(it != params.end()) << op << ": missing parameter '" << name << "' in " << str();
  return it->second.real();
}

double Workload::real_or(const std::string& name, double fallback) const {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second.real();
}

bool Workload::has_epilogue(const std::string& e) const {
  return std::find(epilogue.begin(), epilogue.end(), e) != epilogue.end();
}

bool Workload::at_run_time(const std::string& name) const {
  return std::find(run_time.begin(), run_time.end(), name) != run_time.end();
}

std::string Workload::str() const {
  std::ostringstream os;
  os << op;
  for (const auto& [k, v] : params) os << ' ' << k << '=' << v.str();
  os << ' ' << dtype.str();
  for (const std::string& e : epilogue) os << " +" << e;
  if (!run_time.empty()) {
    os << " run-time";
    for (const std::string& d : run_time) {
      os << ' ' << d;
      if (auto m = run_time_max.find(d); m != run_time_max.end()) os << "<=" << m->second;
    }
  }
  return os.str();
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    std::optional<int64_t> next = checked_mul(n, d);
    user_check(next.has_value()) << "tensor " << name << " has more elements than int64 holds";
    n = *next;
  }
  return n;
}

std::vector<ir::DataType> OpTemplate::dtypes() const {
  return {ir::DataType::f32(), ir::DataType::f16(), ir::DataType::bf16()};
}

void OpTemplate::check(const Workload&, const Target&) const {}

void OpTemplate::validate(const Workload& w, const Target& t) const {
  validate_descriptors(*this, w);
  check(w, t);
  validate_arguments(*this, w);
}

ScheduledKernel OpTemplate::instantiate(const Workload& w, const Target& t,
                                        const Config& cfg) const {
  validate(w, t);
  space(w, t).validate(cfg);
  ScheduledKernel k = schedule(w, t, cfg);
  internal_check(k.sizes.size() == w.run_time.size())
      << name() << " built " << k.sizes.size() << " run-time sizes for " << w.str();
  return k;
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
