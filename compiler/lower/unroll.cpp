#include "compiler/lower/unroll.h"

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/substitute.h"

namespace kiln::lower {

namespace {

constexpr int64_t kMaxUnroll = 4096;  // copies; beyond this unrolling only bloats code

class Unroller : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  ir::Stmt mutate(const ir::ForNode* op, const ir::Stmt& self) override {
    ir::Stmt s = ir::IRMutator::mutate(op, self);
    const auto* f = s.as<ir::ForNode>();
    if (!f || f->for_kind != ir::ForKind::Unrolled) return s;
    auto ext = ir::as_const_int(f->extent);
    user_check(ext.has_value()) << "unroll of loop '" << f->var.name()
                                << "' needs a constant extent, but it is " << f->extent;
    user_check(*ext <= kMaxUnroll) << "unroll of loop '" << f->var.name() << "' would make "
                                   << *ext << " copies (at most " << kMaxUnroll << ")";
    std::vector<ir::Stmt> copies;
    for (int64_t i = 0; i < *ext; ++i)
      copies.push_back(ir::substitute(f->body, f->var, f->min + ir::Expr(i)));
    return ir::make_seq(copies);
  }
};

}  // namespace

ir::Stmt unroll_loops(const ir::Stmt& s) { return Unroller().mutate(s); }

}  // namespace kiln::lower
