// Loop nest building for schedule_ops: one stage's loops from its schedule (splits,
// fuses, reorders, loop attributes, reduction init, guards) with compute_at stages
// realized in small buffers at their loop. Kept apart from bound inference, whose results
// it only reads, and from tensorize, which it calls at a tensorized loop.
#include "compiler/lower/loop_nest_builder.h"

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/tensorize.h"

namespace kiln::lower {

using ir::Buffer;
using ir::Expr;
using ir::IterVar;
using ir::Stmt;
using ir::Var;
using te::AttachKind;
using te::Relation;
using te::StageNode;

namespace {

// Moves every access of one buffer to another, subtracting the region's origin.
class RebaseBuffer : public ir::IRMutator {
 public:
  RebaseBuffer(const ir::BufferNode* from, Buffer to, std::vector<Expr> origin)
      : from_(from), to_(std::move(to)), origin_(std::move(origin)) {}
  using ir::IRMutator::mutate;

 protected:
  std::vector<Expr> rebase(const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(ir::simplify(idx[d] - origin_[d]));
    return out;
  }
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    if (l->buffer.get() != from_) return e;
    return ir::make_load(to_, rebase(l->indices), l->predicate);
  }
  Stmt mutate(const ir::StoreNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* st = s.as<ir::StoreNode>();
    if (st->buffer.get() != from_) return s;
    return ir::make_store(to_, st->value, rebase(st->indices), st->predicate);
  }

 private:
  const ir::BufferNode* from_;
  Buffer to_;
  std::vector<Expr> origin_;
};

class NestBuilder {
 public:
  NestBuilder(const te::Schedule& s, StageInfoMap& info) : s_(s), info_(info) {}

  Stmt make_nest(StageInfo& si) {
    StageNode* st = si.stage;
    const auto& leaf = st->leaf;
    size_t n = leaf.size();
    size_t first_reduce = n;
    for (size_t i = 0; i < n; ++i)
      if (leaf[i]->kind == ir::IterKind::Reduce) {
        first_reduce = i;
        break;
      }
    ir::VarMap rv = root_value_map(si);
    const Buffer& out = st->op()->buffer;
    std::vector<Expr> out_idx;
    for (const IterVar& a : st->op()->axes) out_idx.push_back(rv.at(a->var.node()));
    const auto* red = si.body.as<ir::ReduceNode>();
    Expr value = ir::substitute(red ? red->source : si.body, rv);
    auto conds = guards(si);
    std::vector<Expr> all_conds, spatial_conds;
    for (const auto& [c, reduce] : conds) {
      all_conds.push_back(c);
      if (!reduce) spatial_conds.push_back(c);
    }

    auto loop_of = [&](const IterVar& iv, Stmt body, Var var) {
      const te::IterAttr* attr = st->attr(iv);
      ir::ForKind kind = attr ? attr->for_kind : ir::ForKind::Serial;
      std::map<std::string, Expr> pragmas = attr ? attr->pragmas : std::map<std::string, Expr>{};
      return ir::make_for(var, 0, si.extent.at(iv.get()), kind, std::move(body), pragmas);
    };

    // Reductions start from the identity in a nest of the spatial loops that sit inside
    // the first reduction loop, placed just before it.
    auto make_init = [&]() {
      ir::VarMap fresh;
      std::vector<IterVar> loops;
      for (size_t i = first_reduce; i < n; ++i) {
        if (leaf[i]->kind != ir::IterKind::Spatial) continue;
        loops.push_back(leaf[i]);
        fresh[leaf[i]->var.node()] = Var(leaf[i]->var.name() + ".init");
      }
      std::vector<Expr> idx, conds_init;
      for (const Expr& i : out_idx) idx.push_back(ir::substitute(i, fresh));
      for (const Expr& c : spatial_conds) conds_init.push_back(ir::substitute(c, fresh));
      Stmt s =
          guarded(ir::make_store(out, ir::reduce_identity(red->op, out->dtype), idx), conds_init);
      for (auto it = loops.rbegin(); it != loops.rend(); ++it)
        s = loop_of(*it, s, Var(fresh.at((*it)->var.node())));
      return s;
    };

    auto make_store = [&](bool update) {
      Expr v = update ? ir::reduce_combine(red->op, ir::make_load(out, out_idx), value) : value;
      return guarded(ir::make_store(out, v, out_idx), all_conds);
    };

    std::function<Stmt(size_t, bool)> build = [&](size_t l, bool in_update) -> Stmt {
      if (red && l == first_reduce && !in_update)
        return ir::make_seq({make_init(), build(l, true)});
      if (l == n) return make_store(red != nullptr);
      if (const te::IterAttr* a = st->attr(leaf[l]); a && a->tensorize)
        return make_tensorized(info_, si, l, first_reduce, out_idx, value, all_conds,
                               *a->tensorize);
      Stmt inner = attach_here(si, leaf[l], build(l + 1, in_update));
      return loop_of(leaf[l], inner, leaf[l]->var);
    };
    return build(0, false);
  }

 private:
  // Conditions under which an iteration of the leaf loops is a real point of the stage:
  // non-dividing splits overshoot, and attached regions may stick out of the tensor.
  std::vector<std::pair<Expr, bool>> guards(const StageInfo& si) {
    std::vector<std::pair<Expr, bool>> conds;  // (condition, involves a reduction axis)
    for (const Relation& r : si.stage->relations) {
      if (r.kind != Relation::Split) continue;
      Expr e = si.extent.at(r.parent.get());
      Expr rem = ir::simplify(ir::floormod(e, si.extent.at(r.inner.get())));
      if (ir::is_zero(rem)) continue;
      conds.emplace_back(si.value.at(r.parent.get()) < e, r.parent->kind == ir::IterKind::Reduce);
    }
    if (si.stage->attach == AttachKind::At) {
      ir::VarMap rv = root_value_map(si);
      for (const IterVar& a : si.stage->op()->axes)
        conds.emplace_back(rv.at(a->var.node()) < a->extent, false);
    }
    return conds;
  }

  // Computes the stages attached at loop `iv` of `si` at the top of its body, each in a
  // buffer just big enough for the region the loop reads.
  Stmt attach_here(StageInfo& si, const IterVar& iv, Stmt inner) {
    std::vector<StageNode*> attached;
    for (const auto& st : s_.stages())
      if (st->attach == AttachKind::At && st->attach_stage == si.stage && st->attach_ivar == iv)
        attached.push_back(st.get());
    if (attached.empty()) return inner;
    std::vector<Stmt> seq;
    for (StageNode* p : attached) seq.push_back(make_nest(info_[p]));
    seq.push_back(inner);
    Stmt body = ir::make_seq(seq);
    for (StageNode* p : attached) {
      StageInfo& pi = info_[p];
      const Buffer& b = p->op()->buffer;
      std::vector<Expr> shape;
      for (int64_t e : pi.region_extent) shape.push_back(Expr(e));
      Buffer realized = ir::make_buffer(b->name, b->dtype, shape, p->scope.value_or(b->scope));
      body = RebaseBuffer(b.get(), realized, pi.region_min).mutate(body);
      body = ir::make_allocate(realized, body);
    }
    return body;
  }

  const te::Schedule& s_;
  StageInfoMap& info_;
};

}  // namespace

Stmt make_nest(const te::Schedule& s, StageInfoMap& info, StageInfo& si) {
  return NestBuilder(s, info).make_nest(si);
}

Stmt rebase_buffer(const Stmt& body, const ir::BufferNode* from, Buffer to,
                   std::vector<Expr> origin) {
  return RebaseBuffer(from, std::move(to), std::move(origin)).mutate(body);
}

}  // namespace kiln::lower
