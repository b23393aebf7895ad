#include "schedules/run_time_dims.h"

#include "compiler/base/error.h"

namespace kiln::schedules {

RunTimeDims::RunTimeDims(const Workload& w) : w_(w) {
  for (const std::string& d : w.run_time) vars_.emplace(d, ir::Var(d));
}

ir::Expr RunTimeDims::extent(const std::string& name) const {
  auto it = vars_.find(name);
  return it != vars_.end() ? ir::Expr(it->second) : ir::Expr(w_.param(name));
}

void RunTimeDims::attach(ScheduledKernel& k) const {
  if (vars_.empty()) return;
  const int64_t n = static_cast<int64_t>(w_.run_time.size());
  te::Tensor sizes = te::placeholder({ir::Expr(n)}, ir::DataType::i64(), "sizes");
  KernelArg arg{{"sizes", {n}}, false, nullptr, nullptr, n};
  arg.run_time_sizes = w_.run_time;
  k.tensors.insert(k.tensors.begin(), sizes);
  k.args.insert(k.args.begin(), std::move(arg));
  k.sizes.clear();
  for (const std::string& d : w_.run_time) k.sizes.push_back(vars_.at(d));
  k.sizes_buffer = sizes;
}

}  // namespace kiln::schedules
