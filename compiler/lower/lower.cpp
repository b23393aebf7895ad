#include "lower/lower.h"

#include <cstdlib>
#include <iostream>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "lower/loop_partition.h"
#include "lower/schedule_ops.h"
#include "lower/storage_flatten.h"
#include "lower/unroll.h"
#include "lower/vectorize.h"
#include "lower/verify.h"

namespace kiln::lower {

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> kNames = {
      "schedule_ops", "simplify", "partition_loops", "flatten_storage",
      "vectorize",    "unroll",   "final_simplify",
  };
  return kNames;
}

ir::LoweredFunc lower(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const std::string& name, const LowerOptions& options) {
  user_check(!name.empty()) << "a kernel needs a name";
  const bool dump = std::getenv("KILN_DUMP_IR") != nullptr;
  ir::LoweredFunc f;
  f.name = name;
  for (const te::Tensor& t : args) f.args.push_back(t.buffer());

  auto step = [&](const char* pass, ir::Stmt body) {
    f.body = std::move(body);
    if (dump) std::cerr << "// after " << pass << " (" << name << ")\n" << f.body << '\n';
    if (options.after_pass) options.after_pass(pass, f.body);
  };

  // Loop nests from the schedule: splits, reorders, attachments, reductions, guards.
  step("schedule_ops", schedule_ops(s, args));
  // Resolve guards and index arithmetic that loop bounds already decide.
  step("simplify", ir::simplify(f.body));
  // Peel the iterations of partial tiles so main loop bodies have no guard: needs the
  // multi-dimensional guards still readable, so it runs before flattening.
  step("partition_loops", partition_loops(f.body));
  // One flat index per access, as the machine sees memory.
  step("flatten_storage", flatten_storage(f.body, f.args));
  // Vector loops to ramps and broadcasts; flat indices make contiguous accesses visible
  // as ramp(base, 1, lanes).
  step("vectorize", vectorize_loops(f.body));
  // Unroll last so each copy inherits vectorized bodies and constant indices.
  step("unroll", unroll_loops(f.body));
  step("final_simplify", ir::simplify(f.body));
  verify_lowered(f, "final_simplify");
  return f;
}

}  // namespace kiln::lower
