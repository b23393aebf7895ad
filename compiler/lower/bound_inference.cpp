// Bound inference for schedule_ops: computes each stage's loop ranges and, for stages
// attached with compute_at, the region their consumers read inside the attach loop. Kept
// apart from nest building (loop_nest_builder.cpp): it only fills in StageInfo.
#include "compiler/lower/bound_inference.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/interval.h"

namespace kiln::lower {

using ir::Expr;
using ir::IterVar;
using te::AttachKind;
using te::Relation;
using te::StageNode;

namespace {

bool reads_buffer(const Expr& body, const ir::BufferNode* b) {
  bool found = false;
  ir::for_each_expr(body, [&](const Expr& e) {
    if (const auto* l = e.as<ir::LoadNode>()) found |= l->buffer.get() == b;
  });
  return found;
}

class BoundInference {
 public:
  BoundInference(const te::Schedule& s, StageInfoMap& info, const ir::BoundMap& size_bounds)
      : s_(s), info_(info), size_bounds_(size_bounds) {}

  // Consumers first: an attached stage's region depends on its consumer's loops.
  void run() {
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

 private:
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
    ir::BoundMap leaf_bounds = size_bounds_;
    bool inside = false;
    StageInfo& pi = info_[parent];
    // A loop whose extent is a run-time size sweeps a range known only symbolically; the
    // region must still come out of a constant size.
    auto sweep = [&](const StageInfo& info, const IterVar& l, bool relaxed) {
      const Expr ext = info.extent.at(l.get());
      const std::optional<int64_t> c = ir::as_const_int(ext);
      leaf_bounds[l->var.node()] = {0, c ? *c - 1 : ir::const_int_bound(ext - 1, size_bounds_).max};
      if (relaxed) relax[l->var.node()] = {Expr(0), c ? Expr(*c - 1) : ir::simplify(ext - 1)};
    };
    for (const IterVar& l : parent->leaf) {
      sweep(pi, l, inside);
      if (l == st->attach_ivar) inside = true;
    }
    for (StageNode* r : readers)
      for (StageNode* s = r; s != parent; s = s->attach_stage)
        for (const IterVar& l : s->leaf) sweep(info_[s], l, true);
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
          Interval i =
              eval_interval(ir::simplify(ir::substitute(l->indices[d], root_values)), relax);
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
          << "' has no constant size (dimension " << d << " spans " << ext
          << "; a run-time size it spans needs a declared maximum)";
      int64_t size = b.max;
      if (auto full = ir::as_const_int(st->op()->axes[d]->extent)) size = std::min(size, *full);
      const IterVar& axis = st->op()->axes[d];
      si.root_min[axis.get()] = mn;
      // A region as long as a run-time size: the buffer holds its largest, the loop runs
      // what the size is.
      bool spans_size = false;
      for (const auto& [v, range] : size_bounds_) spans_size |= ir::uses_var(ext, v);
      si.extent[axis.get()] = spans_size ? ext : Expr(size);
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

  const te::Schedule& s_;
  StageInfoMap& info_;
  const ir::BoundMap& size_bounds_;
};

}  // namespace

void infer_bounds(const te::Schedule& s, StageInfoMap& info, const ir::BoundMap& size_bounds) {
  BoundInference(s, info, size_bounds).run();
}

}  // namespace kiln::lower
