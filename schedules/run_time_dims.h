// The sizes of a workload that its kernel takes at run time (Workload::run_time), as a
// template sees them: extent("M") is the variable its shapes and loops use in place of M
// where M is taken at run time, else M's constant. Configs are still chosen from the
// params' values (the size a kernel is tuned at); only the compute reads the variables.
//
//   RunTimeDims dims(w);
//   te::Tensor a = te::placeholder({dims.extent("M"), k}, ...);
//   ...
//   ScheduledKernel k = ...;
//   dims.attach(k);  // the sizes' argument, first, when any size is taken at run time
#pragma once

#include <map>
#include <optional>
#include <string>

#include "compiler/ir/expr.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

class RunTimeDims {
 public:
  explicit RunTimeDims(const Workload& w);

  // The run-time variable of `name`, or its constant when compiled in.
  ir::Expr extent(const std::string& name) const;
  // The declared largest value of a run-time size, if any.
  std::optional<int64_t> max(const std::string& name) const;

  // Adds the argument the kernel reads its sizes from, as its first argument: an i64
  // vector of the sizes in the workload's run_time order.
  void attach(ScheduledKernel& k) const;

 private:
  const Workload& w_;
  std::map<std::string, ir::Var> vars_;
};

}  // namespace kiln::schedules
