#include "schedules/op_template.h"

#include <algorithm>
#include <sstream>

#include "ir/error.h"
#include "lower/lower.h"

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

void check_workload(const Workload& w, const std::vector<ir::DataType>& dtypes,
                    const std::vector<std::string>& epilogues) {
  bool dtype_ok = std::find(dtypes.begin(), dtypes.end(), w.dtype) != dtypes.end();
  std::string valid;
  for (ir::DataType t : dtypes) valid += (valid.empty() ? "" : ", ") + t.str();
  user_check(dtype_ok) << w.op << ": dtype " << w.dtype.str() << " is not supported (valid: "
                       << valid << ")";
  for (const std::string& e : w.epilogue) {
    bool ok = std::find(epilogues.begin(), epilogues.end(), e) != epilogues.end();
    std::string names;
    for (const std::string& n : epilogues) names += (names.empty() ? "" : ", ") + n;
    user_check(ok) << w.op << ": unknown epilogue '" << e << "' (valid: " << names << ")";
  }
  for (const auto& [k, v] : w.params)
    user_check(v >= 0) << w.op << ": shape parameter " << k << " = " << v << " is negative";
}

BuiltKernel lower_kernel(const te::Schedule& sch, const std::vector<te::Tensor>& args,
                         const std::string& kernel_name, const std::vector<TensorSpec>& inputs,
                         const TensorSpec& output, double flops) {
  BuiltKernel k;
  k.func = lower::lower(sch, args, kernel_name);
  k.flops = flops;
  for (const TensorSpec& s : inputs) k.args.push_back({s, false, nullptr, nullptr, s.elements()});
  k.args.push_back({output, true, nullptr, nullptr, output.elements()});
  return k;
}

}  // namespace kiln::schedules
