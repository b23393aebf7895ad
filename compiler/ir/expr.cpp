#include <cmath>
#include <limits>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/stmt.h"

namespace kiln::ir {

Expr::Expr(int v) : Expr(make_int(DataType::index(), v)) {}
Expr::Expr(int64_t v) : Expr(make_int(DataType::index(), v)) {}

Var::Var(const std::string& name, DataType t)
    : Expr(std::make_shared<const VarNode>(t, name)) {}
Var::Var(const Expr& e) : Expr(e) { internal_check(e.as<VarNode>() != nullptr) << "not a Var"; }

Buffer make_buffer(const std::string& name, DataType dtype, std::vector<Expr> shape,
                   MemScope scope) {
  internal_check(dtype.is_scalar()) << "buffer " << name << " needs a scalar element type";
  for (const Expr& s : shape) internal_check(s.defined() && s.type().is_int());
  return std::make_shared<const BufferNode>(
      BufferNode{name, dtype, std::move(shape), scope, Var(name, DataType::handle())});
}

IterVar make_iter_var(const std::string& name, Expr min, Expr extent, IterKind kind) {
  return std::make_shared<const IterVarNode>(
      IterVarNode{Var(name), std::move(min), std::move(extent), kind});
}

Expr reduce_identity(ReduceOp op, DataType t) {
  switch (op) {
    case ReduceOp::Sum: return make_zero(t);
    case ReduceOp::Max:
      if (t.is_float()) return make_float(t, -std::numeric_limits<double>::infinity());
      return make_int(t, t.is_int() ? -(int64_t{1} << (t.bits - 1)) : 0);
    case ReduceOp::Min:
      if (t.is_float()) return make_float(t, std::numeric_limits<double>::infinity());
      return make_int(t, t.is_int() ? (int64_t{1} << (t.bits - 1)) - 1
                                    : static_cast<int64_t>((uint64_t{1} << (t.bits - 1)) - 1));
  }
  return Expr();
}

Expr reduce_combine(ReduceOp op, Expr acc, Expr value) {
  switch (op) {
    case ReduceOp::Sum: return acc + value;
    case ReduceOp::Max: return max(acc, value);
    case ReduceOp::Min: return min(acc, value);
  }
  return Expr();
}

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "for";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
  }
  return "?";
}

template <typename N>
static Stmt wrap(N&& n) {
  return Stmt(std::make_shared<const N>(std::forward<N>(n)));
}

Stmt make_let_stmt(Var var, Expr value, Stmt body) {
  LetStmtNode n;
  n.var = std::move(var), n.value = std::move(value), n.body = std::move(body);
  return wrap(std::move(n));
}

Stmt make_store(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate) {
  internal_check(value.type().element() == buffer->dtype)
      << "store of " << value.type().str() << " into " << buffer->name << " of "
      << buffer->dtype.str();
  StoreNode n;
  n.buffer = std::move(buffer), n.value = std::move(value), n.indices = std::move(indices);
  n.predicate = std::move(predicate);
  return wrap(std::move(n));
}

Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, Annotations annotations) {
  ForNode n;
  n.var = std::move(var), n.min = std::move(min), n.extent = std::move(extent);
  n.for_kind = kind, n.body = std::move(body), n.annotations = std::move(annotations);
  return wrap(std::move(n));
}

Stmt make_allocate(Buffer buffer, Stmt body) {
  AllocateNode n;
  n.buffer = std::move(buffer), n.body = std::move(body);
  return wrap(std::move(n));
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const auto* seq = s.as<SeqNode>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return Stmt();
  if (flat.size() == 1) return flat[0];
  SeqNode n;
  n.stmts = std::move(flat);
  return wrap(std::move(n));
}

Stmt make_if(Expr condition, Stmt then_case, Stmt else_case) {
  IfThenElseNode n;
  n.condition = std::move(condition), n.then_case = std::move(then_case);
  n.else_case = std::move(else_case);
  return wrap(std::move(n));
}

Stmt make_evaluate(Expr value) {
  EvaluateNode n;
  n.value = std::move(value);
  return wrap(std::move(n));
}

}  // namespace kiln::ir
