// The entry point of schedule_ops: checks the arguments, inlines stages, then runs bound
// inference (bound_inference.cpp) and builds each root stage's loop nest
// (loop_nest_builder.cpp, which calls tensorize.cpp), and allocates the intermediates.
#include "compiler/lower/schedule_ops.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/bound_inference.h"
#include "compiler/lower/loop_nest_builder.h"
#include "compiler/lower/stage_info.h"

namespace kiln::lower {

using ir::Buffer;
using ir::Expr;
using ir::IterVar;
using ir::Stmt;
using te::AttachKind;
using te::StageNode;

namespace {

// Replaces loads of inlined stages by their bodies.
class Inliner : public ir::IRMutator {
 public:
  Inliner(const ir::BufferNode* buf, const std::vector<IterVar>& axes, Expr body)
      : buf_(buf), axes_(axes), body_(std::move(body)) {}
  using ir::IRMutator::mutate;

 protected:
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    if (l->buffer.get() != buf_) return e;
    ir::VarMap m;
    for (size_t d = 0; d < axes_.size(); ++d) m[axes_[d]->var.node()] = l->indices[d];
    return ir::substitute(body_, m);
  }

 private:
  const ir::BufferNode* buf_;
  const std::vector<IterVar>& axes_;
  Expr body_;
};

class ScheduleOps {
 public:
  ScheduleOps(const te::Schedule& s, const std::vector<te::Tensor>& args,
              const ir::BoundMap& size_bounds)
      : s_(s), args_(args), size_bounds_(size_bounds) {}

  Stmt run() {
    check_args();
    for (const auto& st : s_.stages()) {
      StageInfo& si = info_[st.get()];
      si.stage = st.get();
      si.body = st->op()->body;
    }
    inline_stages();
    infer_bounds(s_, info_, size_bounds_);
    std::vector<Stmt> nests;
    std::vector<Buffer> intermediates;
    for (const auto& st : s_.stages()) {
      if (st->op()->kind != te::OpKind::Compute || st->attach != AttachKind::Root) continue;
      nests.push_back(make_nest(s_, info_, info_[st.get()]));
      if (!is_arg(st->tensor)) {
        const Buffer& b = st->op()->buffer;
        intermediates.push_back(st->scope && *st->scope != b->scope ? rescope(b, *st->scope) : b);
      }
    }
    Stmt body = ir::make_seq(nests);
    for (const auto& [from, to] : rescoped_)
      body = rebase_buffer(body, from.get(), to, std::vector<Expr>(from->shape.size(), Expr(0)));
    for (auto it = intermediates.rbegin(); it != intermediates.rend(); ++it)
      body = ir::make_allocate(*it, body);
    return body;
  }

 private:
  bool is_arg(const te::Tensor& t) const {
    return std::find(args_.begin(), args_.end(), t) != args_.end();
  }

  void check_args() {
    for (const te::Tensor& t : s_.outputs())
      user_check(is_arg(t)) << "output '" << t.name() << "' is not among the kernel arguments";
    for (const auto& st : s_.stages()) {
      if (st->op()->kind == te::OpKind::Placeholder)
        user_check(is_arg(st->tensor)) << "input '" << st->op()->name
                                       << "' is read but is not among the kernel arguments";
    }
  }

  void inline_stages() {
    const auto& stages = s_.stages();
    for (size_t i = 0; i < stages.size(); ++i) {
      StageNode* st = stages[i].get();
      if (st->attach != AttachKind::Inline) continue;
      Inliner inl(st->op()->buffer.get(), st->op()->axes, info_[st].body);
      for (size_t j = i + 1; j < stages.size(); ++j) {
        StageInfo& c = info_[stages[j].get()];
        if (c.body.defined()) c.body = inl.mutate(c.body);
      }
    }
  }

  // An intermediate at the root whose schedule moved it to another scope: every access in
  // the kernel moves to a new buffer of that scope (see run()).
  Buffer rescope(const Buffer& b, ir::MemScope scope) {
    Buffer moved = ir::make_buffer(b->name, b->dtype, b->shape, scope);
    rescoped_.emplace_back(b, moved);
    return moved;
  }

  const te::Schedule& s_;
  const std::vector<te::Tensor>& args_;
  const ir::BoundMap& size_bounds_;
  StageInfoMap info_;
  std::vector<std::pair<Buffer, Buffer>> rescoped_;
};

}  // namespace

Stmt schedule_ops(const te::Schedule& s, const std::vector<te::Tensor>& args,
                  const ir::BoundMap& size_bounds) {
  return ScheduleOps(s, args, size_bounds).run();
}

}  // namespace kiln::lower
