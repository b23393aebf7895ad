#include "lower/lower.h"

#include <cstdlib>
#include <iostream>
#include <unordered_set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "lower/loop_partition.h"
#include "lower/schedule_ops.h"
#include "lower/storage_flatten.h"
#include "lower/unroll.h"
#include "lower/vectorize.h"
#include "lower/verify.h"

namespace kiln::lower {

namespace {

// The first variable that no loop or let around it binds. Kernels take only buffers, so
// such a variable (a shape or split factor given as a Var) has no value at run time.
class UnboundVar : public ir::IRVisitor {
 public:
  const ir::VarNode* first = nullptr;
  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::VarNode* op) override {
    if (!first && !bound_.count(op)) first = op;
  }
  void visit(const ir::ForNode* op) override {
    visit(op->min);
    visit(op->extent);
    in_scope(op->var, [&] { visit(op->body); });
  }
  void visit(const ir::LetStmtNode* op) override {
    visit(op->value);
    in_scope(op->var, [&] { visit(op->body); });
  }
  void visit(const ir::LetNode* op) override {
    visit(op->value);
    in_scope(op->var, [&] { visit(op->body); });
  }

 private:
  template <typename F>
  void in_scope(const ir::Var& v, F body) {
    bool added = bound_.insert(v.node()).second;
    body();
    if (added) bound_.erase(v.node());
  }
  std::unordered_set<const ir::VarNode*> bound_;
};

}  // namespace

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
  // A free variable is the user's (a symbolic shape), not a kiln bug: say so before the
  // verifier would.
  UnboundVar unbound;
  unbound.visit(f.body);
  if (unbound.first)
    user_error() << "kernel '" << name << "' uses '" << unbound.first->name
                 << "', which nothing binds: kernels take only buffers, so shapes and split "
                    "factors must be constants";
  verify_lowered(f, "final_simplify");
  return f;
}

}  // namespace kiln::lower
