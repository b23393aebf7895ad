// What schedule_ops learns about each stage, shared by its steps: bound inference
// (bound_inference.h) fills it in, loop nest building (loop_nest_builder.h) and tensorize
// (tensorize.h) read it. Internal to compiler/lower; kept apart so that each step can
// live in its own file and still pass the same per-stage record along.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/stmt.h"
#include "compiler/ir/substitute.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

using IvMap = std::unordered_map<const ir::IterVarNode*, ir::Expr>;

// Everything lowering learns about one stage.
struct StageInfo {
  te::StageNode* stage = nullptr;
  ir::Expr body;                     // after inlining
  IvMap root_min, extent;            // extent of every iter var (root, split parts, fused)
  IvMap value;                       // value of every iter var in terms of the leaf loop vars
  std::vector<ir::Expr> region_min;  // attached stages: first element of the realized region
  std::vector<int64_t> region_extent;

  bool is_reduction() const { return body.as<ir::ReduceNode>() != nullptr; }
  const std::string& name() const { return stage->op()->name; }
};

using StageInfoMap = std::unordered_map<const te::StageNode*, StageInfo>;

// The value of every root axis of the stage in terms of its leaf loop variables.
inline ir::VarMap root_value_map(const StageInfo& si) {
  ir::VarMap m;
  for (const ir::IterVar& a : si.stage->root_axes())
    m[a->var.node()] = ir::simplify(si.root_min.at(a.get()) + si.value.at(a.get()));
  return m;
}

inline int64_t const_extent(const StageInfo& si, const ir::IterVar& iv) {
  auto c = ir::as_const_int(si.extent.at(iv.get()));
  user_check(c.has_value()) << "loop '" << iv->var.name() << "' of '" << si.name()
                            << "' has no constant extent (" << si.extent.at(iv.get()) << ")";
  return *c;
}

// `s` under the conjunction of `conds` (none: `s` itself).
inline ir::Stmt guarded(ir::Stmt s, const std::vector<ir::Expr>& conds) {
  ir::Expr all;
  for (const ir::Expr& c : conds) all = all.defined() ? (all && c) : c;
  return all.defined() ? ir::make_if(all, s) : s;
}

}  // namespace kiln::lower
