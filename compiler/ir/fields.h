// How generic code sees an IR node: which concrete node a handle holds, and what each of
// its fields is. The visitor, the mutator, structural equality and hashing are written once
// against this instead of once per node.
//
// A node's `fields()` (ir/expr.h, ir/stmt.h) lists its members; what a field is follows
// from its type:
//   Expr, Stmt, std::vector<Expr>, std::vector<Stmt>
//               children: walked by the visitor, rebuilt by the mutator, compared and
//               hashed structurally. An Expr or Stmt child may be undefined (optional).
//   Var         the variable the node binds (Let, LetStmt, For): a definition, not a use,
//               so it is not walked; compared by identity.
//   Buffer, IterVar
//               references to shared definitions: compared by identity, not walked.
//   Annotations a loop's pragmas: compared structurally, not walked (they hold constants).
//   others      plain values (numbers, names, kinds, types): compared with ==.
#pragma once

#include <tuple>
#include <type_traits>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/stmt.h"

namespace kiln::ir {

// Calls `f` with the node `e` holds, as a pointer to its concrete type (`e` is defined).
template <typename F>
decltype(auto) with_node(const Expr& e, F&& f) {
  const ExprNode* n = e.get();
  switch (e.kind()) {
    case ExprKind::IntImm: return f(static_cast<const IntImmNode*>(n));
    case ExprKind::FloatImm: return f(static_cast<const FloatImmNode*>(n));
    case ExprKind::StringImm: return f(static_cast<const StringImmNode*>(n));
    case ExprKind::Var: return f(static_cast<const VarNode*>(n));
    case ExprKind::Not: return f(static_cast<const NotNode*>(n));
    case ExprKind::Select: return f(static_cast<const SelectNode*>(n));
    case ExprKind::Cast: return f(static_cast<const CastNode*>(n));
    case ExprKind::Load: return f(static_cast<const LoadNode*>(n));
    case ExprKind::Ramp: return f(static_cast<const RampNode*>(n));
    case ExprKind::Broadcast: return f(static_cast<const BroadcastNode*>(n));
    case ExprKind::Call: return f(static_cast<const CallNode*>(n));
    case ExprKind::Let: return f(static_cast<const LetNode*>(n));
    case ExprKind::Reduce: return f(static_cast<const ReduceNode*>(n));
    default: return f(static_cast<const BinaryNode*>(n));  // Add ... Or share one layout
  }
}

// Calls `f` with the node `s` holds, as a pointer to its concrete type (`s` is defined).
template <typename F>
decltype(auto) with_node(const Stmt& s, F&& f) {
  const StmtNode* n = s.get();
  switch (s.kind()) {
    case StmtKind::LetStmt: return f(static_cast<const LetStmtNode*>(n));
    case StmtKind::Store: return f(static_cast<const StoreNode*>(n));
    case StmtKind::For: return f(static_cast<const ForNode*>(n));
    case StmtKind::Allocate: return f(static_cast<const AllocateNode*>(n));
    case StmtKind::Seq: return f(static_cast<const SeqNode*>(n));
    case StmtKind::IfThenElse: return f(static_cast<const IfThenElseNode*>(n));
    case StmtKind::Evaluate: return f(static_cast<const EvaluateNode*>(n));
  }
  internal_error() << "statement of unknown kind " << static_cast<int>(s.kind());
  __builtin_unreachable();
}

// A single child (Expr or Stmt), or a list of children.
template <typename T>
inline constexpr bool kIsChild = std::is_same_v<T, Expr> || std::is_same_v<T, Stmt>;
template <typename T>
inline constexpr bool kIsChildList =
    std::is_same_v<T, std::vector<Expr>> || std::is_same_v<T, std::vector<Stmt>>;

// Calls `f` on every child of `node` in field order, list elements one by one; undefined
// (optional) children included.
template <typename Node, typename F>
void for_each_child(const Node& node, F&& f) {
  auto one_field = [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (kIsChild<T>) {
      f(field);
    } else if constexpr (kIsChildList<T>) {
      for (const auto& child : field) f(child);
    }
  };
  std::apply([&](const auto&... field) { (one_field(field), ...); }, node.fields());
}

}  // namespace kiln::ir
