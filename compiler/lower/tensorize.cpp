// Tensorize for schedule_ops: describes the region a tensorized loop nest covers (output
// and input bases, extents) to the intrinsic and returns its call in place of the loops.
// Kept apart from nest building (loop_nest_builder.cpp) since it emits no loops itself.
#include "compiler/lower/tensorize.h"

#include <unordered_set>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"

namespace kiln::lower {

using ir::Expr;
using ir::IterVar;
using ir::Stmt;
using te::AttachKind;
using te::StageNode;

Stmt make_tensorized(StageInfoMap& info, StageInfo& si, size_t l, size_t first_reduce,
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
      if (auto e = ir::as_const_int(info[p].extent.at(iv.get())))
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

}  // namespace kiln::lower
