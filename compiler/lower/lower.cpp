// The lowering pipeline: one table of passes in order, which lower() walks, showing and
// (when asked) verifying the IR after each.
#include "compiler/lower/lower.h"

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "compiler/base/error.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/loop_partition.h"
#include "compiler/lower/schedule_ops.h"
#include "compiler/lower/storage_flatten.h"
#include "compiler/lower/unroll.h"
#include "compiler/lower/vectorize.h"
#include "compiler/lower/verify.h"

namespace kiln::lower {

namespace {

// What a pass works on: the schedule and its tensors (the first pass reads them), and the
// kernel so far, whose body is the IR the previous pass produced.
struct PassInput {
  const te::Schedule& schedule;
  const std::vector<te::Tensor>& tensors;
  const std::vector<ir::Var>& sizes;  // the run-time sizes (RunTimeSizes::vars)
  const ir::BoundMap& size_bounds;    // and their ranges
  ir::LoweredFunc& func;  // flatten_storage also rewrites its argument buffers
};

// One step of lowering: its name (for dumps, after_pass and errors) and what it runs.
struct Pass {
  const char* name;
  ir::Stmt (*run)(PassInput& in);
  // The verifier check that holds from this pass on, if the pass establishes one.
  bool Invariants::*establishes = nullptr;
};

// The pass order, top to bottom, each with why it sits where it does.
const std::vector<Pass>& passes() {
  static const std::vector<Pass> kPasses = {
      // Loop nests from the schedule: splits, reorders, attachments, reductions, guards.
      {"schedule_ops",
       [](PassInput& in) { return schedule_ops(in.schedule, in.tensors, in.size_bounds); }},
      // Resolve guards and index arithmetic that loop bounds already decide.
      {"simplify", [](PassInput& in) { return ir::simplify(in.func.body); }},
      // Peel the iterations of partial tiles so main loop bodies have no guard: needs the
      // multi-dimensional guards still readable, so it runs before flattening.
      {"partition_loops", [](PassInput& in) { return partition_loops(in.func.body, in.sizes); }},
      // One flat index per access, as the machine sees memory.
      {"flatten_storage", [](PassInput& in) { return flatten_storage(in.func.body, in.func.args); },
       &Invariants::flat_accesses},
      // Vector loops to ramps and broadcasts; flat indices make contiguous accesses visible
      // as ramp(base, 1, lanes).
      {"vectorize", [](PassInput& in) { return vectorize_loops(in.func.body, in.sizes); },
       &Invariants::no_vector_loops},
      // Unroll last so each copy inherits vectorized bodies and constant indices.
      {"unroll", [](PassInput& in) { return unroll_loops(in.func.body); }},
      // Fold what unrolling made constant: each copy's indices and guards.
      {"final_simplify", [](PassInput& in) { return ir::simplify(in.func.body); }},
  };
  return kPasses;
}

bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Pass& p : passes()) names.emplace_back(p.name);
    return names;
  }();
  return kNames;
}

ir::LoweredFunc lower(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const std::string& name, const LowerOptions& options,
                      const RunTimeSizes& sizes) {
  user_check(!name.empty()) << "a kernel needs a name";
  const bool dump = std::getenv("KILN_DUMP_IR") != nullptr;
  const bool verify = options.verify_each_pass || env_switch("KILN_VERIFY_IR");
  ir::LoweredFunc f;
  f.name = name;
  for (const te::Tensor& t : args) f.args.push_back(t.buffer());
  size_t sizes_arg = args.size();
  if (!sizes.vars.empty()) {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].buffer().get() == sizes.buffer.buffer().get()) sizes_arg = i;
    user_check(sizes_arg < args.size() && sizes.buffer.ndim() == 1 &&
               sizes.buffer.dtype() == ir::DataType::i64())
        << "kernel '" << name << "' takes run-time sizes from '" << sizes.buffer.name()
        << "', which must be one of its arguments, an i64 vector";
  }

  // A size is at least 1; at most its declared maximum.
  ir::BoundMap size_bounds;
  for (size_t i = 0; i < sizes.vars.size(); ++i) {
    const int64_t max =
        i < sizes.max.size() && sizes.max[i] > 0 ? sizes.max[i] : ir::IntBound::kPosInf;
    size_bounds[sizes.vars[i].node()] = {1, max};
  }
  PassInput in{s, args, sizes.vars, size_bounds, f};
  Invariants established;
  // The variables the first pass leaves free are the user's (symbolic shapes, split
  // factors given as Vars): a UserError below, so the checks between passes let them be.
  // A variable that a later pass leaves free is a kiln bug, which the verifier reports.
  VarSet user_vars;
  for (const Pass& pass : passes()) {
    f.body = pass.run(in);
    if (options.replace_after_pass) f.body = options.replace_after_pass(pass.name, f.body);
    if (pass.establishes) established.*pass.establishes = true;
    if (dump) std::cerr << "// after " << pass.name << " (" << name << ")\n" << f.body << '\n';
    if (options.after_pass) options.after_pass(pass.name, f.body);
    if (&pass == &passes().front())
      for (const ir::VarNode* v : free_variables(f.body)) user_vars.insert(v);
    if (verify) verify_ir(f, pass.name, established, user_vars);
  }
  // Each run-time size is read from its slot of the sizes argument at the kernel's start.
  for (size_t i = sizes.vars.size(); i-- > 0;)
    f.body = ir::make_let_stmt(
        sizes.vars[i], ir::make_load(f.args[sizes_arg], {ir::Expr(static_cast<int64_t>(i))}),
        f.body);
  for (const ir::VarNode* v : free_variables(f.body))
    user_check(!user_vars.count(v))
        << "kernel '" << name << "' uses '" << v->name
        << "', which nothing binds: a shape or split factor must be a constant or one of the "
           "kernel's run-time sizes";
  verify_lowered(f, passes().back().name);
  return f;
}

}  // namespace kiln::lower
