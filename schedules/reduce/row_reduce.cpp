#include "schedules/reduce/row_reduce.h"

#include <optional>

#include "compiler/ir/op.h"

namespace kiln::schedules {

using ir::Expr;
using ir::Var;

namespace {

std::vector<Expr> extents(const std::vector<Expr>& rows, std::vector<Expr> more = {}) {
  std::vector<Expr> out = rows;
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::vector<Expr> leading(const std::vector<Var>& v, size_t count) {
  return std::vector<Expr>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace

RowReduce row_reduce(const std::vector<Expr>& rows, Expr n, int64_t r, bool is_max,
                     const std::function<Expr(const std::vector<Expr>&, Expr)>& value,
                     const std::string& name) {
  const size_t rank = rows.size();
  auto reduce = [&](Expr v, ir::IterVar axis) {
    return is_max ? te::max_reduce(v, {axis}) : te::sum(v, {axis});
  };
  // A constant n decides which parts exist; a run-time one keeps both.
  const std::optional<int64_t> known = ir::as_const_int(n);
  const Expr chunks = known ? Expr(*known / r) : ir::floordiv(n, Expr(r));
  const Expr done = known ? Expr(*known / r * r) : chunks * r;
  const bool has_chunks = !known || *known / r > 0, has_tail = !known || *known % r != 0;
  RowReduce rr;
  if (has_chunks) {
    ir::IterVar rj = te::reduce_axis(chunks, name + ".rj");
    rr.part = te::compute(
        extents(rows, {Expr(r)}),
        [&](const std::vector<Var>& v) {
          return reduce(value(leading(v, rank), rj->var * r + v[rank]), rj);
        },
        name + ".part");
    ir::IterVar rl = te::reduce_axis(r, name + ".rl");
    te::Tensor part = rr.part;
    rr.whole = te::compute(
        extents(rows),
        [&](const std::vector<Var>& v) {
          std::vector<Expr> at = leading(v, rank);
          at.push_back(rl->var);
          return reduce(part(at), rl);
        },
        has_tail ? name + ".whole" : name);
  }
  if (has_tail) {
    ir::IterVar rt = te::reduce_axis(known ? Expr(*known % r) : n - done, name + ".rt");
    rr.tail = te::compute(
        extents(rows),
        [&](const std::vector<Var>& v) {
          return reduce(value(leading(v, rank), rt->var + done), rt);
        },
        has_chunks ? name + ".tail" : name);
  }
  if (!rr.whole.defined() || !rr.tail.defined()) {
    rr.total = rr.whole.defined() ? rr.whole : rr.tail;
    return rr;
  }
  te::Tensor whole = rr.whole, tail = rr.tail;
  rr.total = te::compute(
      extents(rows),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> at = leading(v, rank);
        return is_max ? ir::max(whole(at), tail(at)) : whole(at) + tail(at);
      },
      name);
  return rr;
}

void schedule_row_reduce(te::Schedule& sch, const RowReduce& rr, const te::Stage* parent,
                         const ir::IterVar& at, bool parallel) {
  te::Stage total = sch[rr.total];
  if (parent) {
    total.set_scope(ir::MemScope::Local);
    total.compute_at(*parent, at);
  } else if (parallel) {
    total.parallel(total.axis(0));
  }
  const size_t rank = rr.total.ndim();
  const ir::IterVar row = total.axis(rank - 1);
  for (const te::Tensor& t : {rr.whole, rr.tail}) {
    if (!t.defined() || t == rr.total) continue;
    te::Stage s = sch[t];
    s.set_scope(ir::MemScope::Local);
    s.compute_at(total, row);
  }
  if (!rr.part.defined()) return;
  te::Stage whole = sch[rr.whole];
  te::Stage part = sch[rr.part];
  part.set_scope(ir::MemScope::Local);
  part.compute_at(whole, whole.axis(rank - 1));
  std::vector<ir::IterVar> order;
  for (size_t i = 0; i < rank; ++i) order.push_back(part.axis(i));
  order.push_back(part.reduce_axis(0));
  order.push_back(part.axis(rank));
  part.reorder(order);
  if (ir::as_const_int(rr.part.shape().back()).value_or(1) > 1) part.vectorize(part.axis(rank));
}

}  // namespace kiln::schedules
