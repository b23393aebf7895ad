// The default walk of IRVisitor and rebuild of IRMutator, both derived from each node's
// fields() (ir/fields.h), so no node's children are listed here.
#include "compiler/ir/functor.h"

#include <utility>

#include "compiler/ir/fields.h"
#include "compiler/ir/op.h"

namespace kiln::ir {

namespace {

// Visits the children of `op` in field order.
template <typename Node>
void walk_children(IRVisitor& v, const Node* op) {
  for_each_child(*op, [&](const auto& child) { v.visit(child); });
}

// A field after mutation: children are mutated (in order), anything else (a bound variable,
// a buffer, a value) is passed on by reference as it is.
template <typename T>
decltype(auto) mutate_field(IRMutator& m, const T& field) {
  if constexpr (kIsChild<T>) {
    return m.mutate(field);
  } else if constexpr (kIsChildList<T>) {
    T out;
    out.reserve(field.size());
    for (const auto& child : field) out.push_back(m.mutate(child));
    return out;
  } else {
    return (field);
  }
}

// Whether mutation left a field as it was: the same nodes, not merely equal ones.
template <typename Before, typename After>
bool same_field(const Before& before, const After& after) {
  if constexpr (kIsChild<Before>) {
    return before.same_as(after);
  } else if constexpr (kIsChildList<Before>) {
    for (size_t i = 0; i < before.size(); ++i)
      if (!before[i].same_as(after[i])) return false;
    return true;
  } else {
    return true;  // not a child: never mutated
  }
}

template <typename Before, typename After, size_t... I>
bool same_fields(const Before& before, const After& after, std::index_sequence<I...>) {
  return (same_field(std::get<I>(before), std::get<I>(after)) && ...);
}

// make_for, except that a loop whose body a mutator removed goes with it.
Stmt rebuild_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body,
                 Annotations annotations) {
  if (!body.defined()) return Stmt();
  return make_for(std::move(var), std::move(min), std::move(extent), kind, std::move(body),
                  std::move(annotations));
}

// make_if, except that a conditional whose branches a mutator removed goes with them, and
// an empty then-branch flips the condition so the else-branch takes its place.
Stmt rebuild_if(Expr condition, Stmt then_case, Stmt else_case) {
  if (!then_case.defined() && !else_case.defined()) return Stmt();
  if (!then_case.defined()) return make_if(make_not(std::move(condition)), std::move(else_case));
  return make_if(std::move(condition), std::move(then_case), std::move(else_case));
}

// The checking constructor that rebuilds each node: its parameters are the node's
// fields() in order (a mismatch does not compile).
template <typename Node>
constexpr auto kRebuild = nullptr;
template <> constexpr auto kRebuild<BinaryNode> = &make_binary;
template <> constexpr auto kRebuild<NotNode> = &make_not;
template <> constexpr auto kRebuild<SelectNode> = &make_select;
template <> constexpr auto kRebuild<CastNode> = &make_cast;
template <> constexpr auto kRebuild<LoadNode> = &make_load;
template <> constexpr auto kRebuild<RampNode> = &make_ramp;
template <> constexpr auto kRebuild<BroadcastNode> = &make_broadcast;
template <> constexpr auto kRebuild<CallNode> = &make_call;
template <> constexpr auto kRebuild<LetNode> = &make_let;
template <> constexpr auto kRebuild<ReduceNode> = &make_reduce;
template <> constexpr auto kRebuild<LetStmtNode> = &make_let_stmt;
template <> constexpr auto kRebuild<StoreNode> = &make_store;
template <> constexpr auto kRebuild<ForNode> = &rebuild_for;
template <> constexpr auto kRebuild<AllocateNode> = &make_allocate;
template <> constexpr auto kRebuild<SeqNode> = &make_seq;
template <> constexpr auto kRebuild<IfThenElseNode> = &rebuild_if;
template <> constexpr auto kRebuild<EvaluateNode> = &make_evaluate;

// Mutates the children of `op` in field order; returns `self` when none changed, else the
// node rebuilt through its checking constructor (which retypes it: a child that became a
// vector makes its parent one).
template <typename Node, typename Handle>
Handle rebuild(IRMutator& m, const Node* op, const Handle& self) {
  auto before = op->fields();
  auto after = std::apply(
      [&](const auto&... field) {
        // braces: fields are mutated left to right
        return std::tuple<decltype(mutate_field(m, field))...>{mutate_field(m, field)...};
      },
      before);
  if (same_fields(before, after, std::make_index_sequence<std::tuple_size_v<decltype(before)>>()))
    return self;
  return std::apply(kRebuild<Node>, std::move(after));
}

}  // namespace

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  with_node(e, [this](const auto* op) { visit(op); });
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  with_node(s, [this](const auto* op) { visit(op); });
}

void IRVisitor::visit(const BinaryNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const NotNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const SelectNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const CastNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const LoadNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const RampNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const BroadcastNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const CallNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const LetNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const ReduceNode* op) { walk_children(*this, op); }

void IRVisitor::visit(const LetStmtNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const StoreNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const ForNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const AllocateNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const SeqNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const IfThenElseNode* op) { walk_children(*this, op); }
void IRVisitor::visit(const EvaluateNode* op) { walk_children(*this, op); }

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  return with_node(e, [&](const auto* op) { return mutate(op, e); });
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  return with_node(s, [&](const auto* op) { return mutate(op, s); });
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>& out) {
  out = mutate_field(*this, in);
  return !same_field(in, out);
}

Expr IRMutator::mutate(const BinaryNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const NotNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const SelectNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const CastNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const LoadNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const RampNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const BroadcastNode* op, const Expr& self) {
  return rebuild(*this, op, self);
}
Expr IRMutator::mutate(const CallNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const LetNode* op, const Expr& self) { return rebuild(*this, op, self); }
Expr IRMutator::mutate(const ReduceNode* op, const Expr& self) { return rebuild(*this, op, self); }

Stmt IRMutator::mutate(const LetStmtNode* op, const Stmt& self) {
  return rebuild(*this, op, self);
}
Stmt IRMutator::mutate(const StoreNode* op, const Stmt& self) { return rebuild(*this, op, self); }
Stmt IRMutator::mutate(const ForNode* op, const Stmt& self) { return rebuild(*this, op, self); }
Stmt IRMutator::mutate(const AllocateNode* op, const Stmt& self) {
  return rebuild(*this, op, self);
}
Stmt IRMutator::mutate(const SeqNode* op, const Stmt& self) { return rebuild(*this, op, self); }
Stmt IRMutator::mutate(const IfThenElseNode* op, const Stmt& self) {
  return rebuild(*this, op, self);
}
Stmt IRMutator::mutate(const EvaluateNode* op, const Stmt& self) {
  return rebuild(*this, op, self);
}

namespace {
class ExprCallback : public IRVisitor {
 public:
  explicit ExprCallback(const std::function<void(const Expr&)>& f) : f_(f) {}
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    f_(e);
    IRVisitor::visit(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
};
}  // namespace

void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  ExprCallback v(f);
  v.visit(s);
}
void for_each_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  ExprCallback v(f);
  v.visit(e);
}

}  // namespace kiln::ir
