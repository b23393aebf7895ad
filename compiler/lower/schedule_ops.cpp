#include "compiler/lower/schedule_ops.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/interval.h"

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

using IvMap = std::unordered_map<const ir::IterVarNode*, Expr>;

// Everything lowering learns about one stage.
struct StageInfo {
  StageNode* stage = nullptr;
  Expr body;                    // after inlining
  IvMap root_min, extent;       // extent of every iter var (root, split parts, fused)
  IvMap value;                  // value of every iter var in terms of the leaf loop vars
  std::vector<Expr> region_min; // attached stages: first element of the realized region
  std::vector<int64_t> region_extent;

  bool is_reduction() const { return body.as<ir::ReduceNode>() != nullptr; }
  const std::string& name() const { return stage->op()->name; }
};

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

bool reads_buffer(const Expr& body, const ir::BufferNode* b) {
  bool found = false;
  ir::for_each_expr(body, [&](const Expr& e) {
    if (const auto* l = e.as<ir::LoadNode>()) found |= l->buffer.get() == b;
  });
  return found;
}

class ScheduleOps {
 public:
  ScheduleOps(const te::Schedule& s, const std::vector<te::Tensor>& args) : s_(s), args_(args) {}

  Stmt run() {
    check_args();
    for (const auto& st : s_.stages()) {
      StageInfo& si = info_[st.get()];
      si.stage = st.get();
      si.body = st->op()->body;
    }
    inline_stages();
    infer_bounds();
    std::vector<Stmt> nests;
    std::vector<Buffer> intermediates;
    for (const auto& st : s_.stages()) {
      if (st->op()->kind != te::OpKind::Compute || st->attach != AttachKind::Root) continue;
      nests.push_back(make_nest(info_[st.get()]));
      if (!is_arg(st->tensor)) {
        const Buffer& b = st->op()->buffer;
        intermediates.push_back(st->scope && *st->scope != b->scope ? rescope(b, *st->scope) : b);
      }
    }
    Stmt body = ir::make_seq(nests);
    for (const auto& [from, to] : rescoped_)
      body = RebaseBuffer(from.get(), to, std::vector<Expr>(from->shape.size(), Expr(0))).mutate(body);
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

  // Consumers first: an attached stage's region depends on its consumer's loops.
  void infer_bounds() {
    const auto& stages = s_.stages();
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      StageNode* st = it->get();
      if (st->op()->kind != te::OpKind::Compute || st->attach == AttachKind::Inline) continue;
      StageInfo& si = info_[st];
      for (const IterVar& a : st->root_axes()) {
        si.root_min[a.get()] = a->min;
        si.extent[a.get()] = a->extent;
      }
      if (st->attach == AttachKind::At) infer_attached_region(si);
      derive_loops(si);
    }
  }

  void infer_attached_region(StageInfo& si) {
    StageNode* st = si.stage;
    StageNode* parent = st->attach_stage;
    const std::string& name = si.name();
    user_check(parent->attach != AttachKind::Inline)
        << "compute_at: '" << name << "' is attached inside '" << parent->op()->name
        << "', which is inlined and has no loops";
    const ir::BufferNode* buf = st->op()->buffer.get();
    // The readers: the parent, or stages computed inside its loops at or within the attach
    // point (a padded input copy per row band, read by the tile's accumulation stage).
    std::vector<StageNode*> readers;
    for (const auto& other : s_.stages()) {
      if (other.get() == st || other->op()->kind != te::OpKind::Compute) continue;
      if (other->attach == AttachKind::Inline) continue;
      if (!reads_buffer(info_[other.get()].body, buf)) continue;
      user_check(other.get() == parent || nested_within(other.get(), parent, st->attach_ivar))
          << "compute_at: '" << name << "' is read by '" << other->op()->name
          << "', which is neither '" << parent->op()->name << "' nor computed inside its loop '"
          << st->attach_ivar->var.name() << "'; a stage can only be computed inside a loop "
          << "that encloses all its consumers";
      readers.push_back(other.get());
    }
    user_check(!readers.empty())
        << "compute_at: '" << name << "' is attached to a loop of '" << parent->op()->name
        << "', which does not read it; attach it inside one of its consumers";
    // The loops inside the attach point sweep their whole range: the parent's inner loops
    // and every loop of the stages between a reader and the parent.
    RelaxMap relax;
    ir::BoundMap leaf_bounds;
    bool inside = false;
    StageInfo& pi = info_[parent];
    for (const IterVar& l : parent->leaf) {
      int64_t ext = const_extent(pi, l);
      leaf_bounds[l->var.node()] = {0, ext - 1};
      if (inside) relax[l->var.node()] = {Expr(0), Expr(ext - 1)};
      if (l == st->attach_ivar) inside = true;
    }
    for (StageNode* r : readers)
      for (StageNode* s = r; s != parent; s = s->attach_stage)
        for (const IterVar& l : s->leaf) {
          int64_t ext = const_extent(info_[s], l);
          relax[l->var.node()] = {Expr(0), Expr(ext - 1)};
          leaf_bounds[l->var.node()] = {0, ext - 1};
        }
    size_t ndim = st->op()->axes.size();
    std::vector<Interval> region(ndim);
    std::vector<bool> seen(ndim, false);
    for (StageNode* r : readers) {
      // A nested reader's root values name its own leaves plus its region's origin, which
      // names the loops of the stage it is attached to, and so on up to the parent.
      ir::VarMap root_values = root_value_map(info_[r]);
      ir::for_each_expr(info_[r].body, [&](const Expr& e) {
        const auto* l = e.as<ir::LoadNode>();
        if (!l || l->buffer.get() != buf) return;
        for (size_t d = 0; d < ndim; ++d) {
          Interval i = eval_interval(ir::simplify(ir::substitute(l->indices[d], root_values)), relax);
          user_check(i.bounded()) << "compute_at: cannot bound the region of '" << name
                                  << "' read by '" << r->op()->name << "' (dimension " << d
                                  << " is indexed by " << ir::simplify(l->indices[d]) << ")";
          region[d] = seen[d] ? interval_union(region[d], i) : i;
          seen[d] = true;
        }
      });
    }
    for (size_t d = 0; d < ndim; ++d) {
      Expr mn = ir::simplify(region[d].min, leaf_bounds);
      Expr ext = ir::simplify(region[d].max - region[d].min + 1, leaf_bounds);
      ir::IntBound b = ir::const_int_bound(ext, leaf_bounds);
      user_check(b.max != ir::IntBound::kPosInf)
          << "compute_at: the region of '" << name << "' inside loop '"
          << st->attach_ivar->var.name() << "' of '" << parent->op()->name
          << "' has no constant size (dimension " << d << " spans " << ext << ")";
      int64_t size = b.max;
      if (auto full = ir::as_const_int(st->op()->axes[d]->extent)) size = std::min(size, *full);
      const IterVar& axis = st->op()->axes[d];
      si.root_min[axis.get()] = mn;
      si.extent[axis.get()] = Expr(size);
      si.region_min.push_back(mn);
      si.region_extent.push_back(size);
    }
  }

  // Whether `s` is computed (directly or through other attached stages) inside `parent`'s
  // loop `iv` or a loop nested in it.
  static bool nested_within(const StageNode* s, const StageNode* parent, const IterVar& iv) {
    for (; s->attach == AttachKind::At; s = s->attach_stage) {
      if (s->attach_stage != parent) continue;
      const auto& leaf = parent->leaf;
      auto at = std::find(leaf.begin(), leaf.end(), s->attach_ivar);
      return at >= std::find(leaf.begin(), leaf.end(), iv);
    }
    return false;
  }

  int64_t const_extent(const StageInfo& si, const IterVar& iv) {
    auto c = ir::as_const_int(si.extent.at(iv.get()));
    user_check(c.has_value()) << "loop '" << iv->var.name() << "' of '" << si.name()
                              << "' has no constant extent (" << si.extent.at(iv.get()) << ")";
    return *c;
  }

  // Extents of split and fused loops (forward), then the value of every iter var in
  // terms of the leaf loop variables (backward).
  void derive_loops(StageInfo& si) {
    for (const Relation& r : si.stage->relations) {
      if (r.kind == Relation::Split) {
        Expr e = si.extent.at(r.parent.get());
        Expr inner = r.factor.defined() ? r.factor : ir::floordiv(e + r.nparts - 1, r.nparts);
        Expr outer = r.factor.defined() ? ir::floordiv(e + r.factor - 1, r.factor) : r.nparts;
        si.extent[r.inner.get()] = ir::simplify(inner);
        si.extent[r.outer.get()] = ir::simplify(outer);
      } else {
        si.extent[r.fused.get()] =
            ir::simplify(si.extent.at(r.outer.get()) * si.extent.at(r.inner.get()));
      }
    }
    for (const IterVar& l : si.stage->leaf) si.value[l.get()] = l->var;
    const auto& rels = si.stage->relations;
    for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
      if (it->kind == Relation::Split) {
        si.value[it->parent.get()] = si.value.at(it->outer.get()) * si.extent.at(it->inner.get()) +
                                     si.value.at(it->inner.get());
      } else {
        Expr f = si.value.at(it->fused.get()), inner = si.extent.at(it->inner.get());
        si.value[it->outer.get()] = ir::floordiv(f, inner);
        si.value[it->inner.get()] = ir::floormod(f, inner);
      }
    }
  }

  ir::VarMap root_value_map(const StageInfo& si) {
    ir::VarMap m;
    for (const IterVar& a : si.stage->root_axes())
      m[a->var.node()] = ir::simplify(si.root_min.at(a.get()) + si.value.at(a.get()));
    return m;
  }

  // Conditions under which an iteration of the leaf loops is a real point of the stage:
  // non-dividing splits overshoot, and attached regions may stick out of the tensor.
  std::vector<std::pair<Expr, bool>> guards(const StageInfo& si) {
    std::vector<std::pair<Expr, bool>> conds;  // (condition, involves a reduction axis)
    for (const Relation& r : si.stage->relations) {
      if (r.kind != Relation::Split) continue;
      Expr e = si.extent.at(r.parent.get());
      Expr rem = ir::simplify(ir::floormod(e, si.extent.at(r.inner.get())));
      if (ir::is_zero(rem)) continue;
      conds.emplace_back(si.value.at(r.parent.get()) < e,
                         r.parent->kind == ir::IterKind::Reduce);
    }
    if (si.stage->attach == AttachKind::At) {
      ir::VarMap rv = root_value_map(si);
      for (const IterVar& a : si.stage->op()->axes)
        conds.emplace_back(rv.at(a->var.node()) < a->extent, false);
    }
    return conds;
  }

  Stmt guarded(Stmt s, const std::vector<Expr>& conds) {
    Expr all;
    for (const Expr& c : conds) all = all.defined() ? (all && c) : c;
    return all.defined() ? ir::make_if(all, s) : s;
  }

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
      Stmt s = guarded(ir::make_store(out, ir::reduce_identity(red->op, out->dtype), idx), conds_init);
      for (auto it = loops.rbegin(); it != loops.rend(); ++it)
        s = loop_of(*it, s, Var(fresh.at((*it)->var.node())));
      return s;
    };

    auto make_store = [&](bool update) {
      Expr v = update ? ir::reduce_combine(red->op, ir::make_load(out, out_idx), value) : value;
      return guarded(ir::make_store(out, v, out_idx), all_conds);
    };

    std::function<Stmt(size_t, bool)> build = [&](size_t l, bool in_update) -> Stmt {
      if (red && l == first_reduce && !in_update) return ir::make_seq({make_init(), build(l, true)});
      if (l == n) return make_store(red != nullptr);
      if (const te::IterAttr* a = st->attr(leaf[l]); a && a->tensorize)
        return make_tensorized(si, l, first_reduce, out_idx, value, all_conds, *a->tensorize);
      Stmt inner = attach_here(si, leaf[l], build(l + 1, in_update));
      return loop_of(leaf[l], inner, leaf[l]->var);
    };
    return build(0, false);
  }

  Stmt make_tensorized(StageInfo& si, size_t l, size_t first_reduce,
                       const std::vector<Expr>& out_idx, const Expr& value,
                       const std::vector<Expr>& conds, const te::TensorIntrin& intrin) {
    const auto& leaf = si.stage->leaf;
    bool reduction = si.is_reduction();
    user_check(!reduction || l >= first_reduce)
        << "tensorize on '" << si.name() << "': loop '" << leaf[l]->var.name()
        << "' is outside the first reduction loop; tensorize the reduction at or inside it";
    te::TensorizeRegion region;
    region.output = si.stage->op()->buffer;
    region.reduction_update = reduction;
    ir::VarMap zero;
    std::unordered_set<const ir::VarNode*> inner_vars;
    ir::BoundMap bounds;
    for (size_t i = 0; i < leaf.size(); ++i) {
      int64_t ext = const_extent(si, leaf[i]);
      bounds[leaf[i]->var.node()] = {0, ext - 1};
      if (i < l) continue;
      zero[leaf[i]->var.node()] = Expr(0);
      inner_vars.insert(leaf[i]->var.node());
      region.extents.push_back(ext);
    }
    // An attached stage's guards also name its consumers' loops (io*8 + ii < 64): bound
    // those too, or a tile that always fits could not be proven to.
    for (StageNode* p = si.stage->attach == AttachKind::At ? si.stage->attach_stage : nullptr; p;
         p = p->attach == AttachKind::At ? p->attach_stage : nullptr)
      for (const IterVar& iv : p->leaf)
        if (auto e = ir::as_const_int(info_[p].extent.at(iv.get())))
          bounds[iv->var.node()] = {0, *e - 1};
    if (!intrin.extents.empty())
      user_check(intrin.extents == region.extents)
          << "tensorize on '" << si.name() << "': intrinsic '" << intrin.name
          << "' needs loop extents that match the loops it replaces";
    for (const Expr& i : out_idx) region.output_base.push_back(ir::simplify(ir::substitute(i, zero)));
    ir::for_each_expr(value, [&](const Expr& e) {
      const auto* ld = e.as<ir::LoadNode>();
      if (!ld) return;
      std::vector<Expr> base;
      for (const Expr& i : ld->indices) base.push_back(ir::simplify(ir::substitute(i, zero)));
      region.inputs.emplace_back(ld->buffer, base);
    });
    std::vector<Expr> outer_conds;
    for (const Expr& c : conds) {
      if (ir::uses_any_var(c, inner_vars)) {
        if (intrin.guards_partial_tiles) continue;  // the intrinsic's body checks its points
        user_check(ir::can_prove(c, bounds))
            << "tensorize on '" << si.name() << "': the loops inside '" << leaf[l]->var.name()
            << "' do not cover whole tiles (a split does not divide its extent)";
      } else {
        outer_conds.push_back(c);
      }
    }
    Stmt s = intrin.emit(region);
    user_check(s.defined()) << "tensorize: intrinsic '" << intrin.name << "' emitted nothing";
    return guarded(s, outer_conds);
  }

  // An intermediate at the root whose schedule moved it to another scope: every access in
  // the kernel moves to a new buffer of that scope (see run()).
  Buffer rescope(const Buffer& b, ir::MemScope scope) {
    Buffer moved = ir::make_buffer(b->name, b->dtype, b->shape, scope);
    rescoped_.emplace_back(b, moved);
    return moved;
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
  const std::vector<te::Tensor>& args_;
  std::unordered_map<const StageNode*, StageInfo> info_;
  std::vector<std::pair<Buffer, Buffer>> rescoped_;
};

}  // namespace

Stmt schedule_ops(const te::Schedule& s, const std::vector<te::Tensor>& args) {
  return ScheduleOps(s, args).run();
}

}  // namespace kiln::lower
