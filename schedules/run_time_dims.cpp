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

std::optional<int64_t> RunTimeDims::max(const std::string& name) const {
  auto it = w_.run_time_max.find(name);
  return it == w_.run_time_max.end() ? std::nullopt : std::optional(it->second);
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
  k.size_max.clear();
  for (const std::string& d : w_.run_time) {
    k.sizes.push_back(vars_.at(d));
    k.size_max.push_back(max(d).value_or(0));
  }
  k.sizes_buffer = sizes;
}

}  // namespace kiln::schedules
