#include "cost_model/loop_tree.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/bounds.h"
#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/substitute.h"

namespace kiln::cost_model {

namespace {

bool is_float_arith(const ir::BinaryNode* op) {
  return op->type.is_float() && (op->kind == ir::ExprKind::Add || op->kind == ir::ExprKind::Sub ||
                                 op->kind == ir::ExprKind::Mul);
}

class Collector : public ir::IRVisitor {
 public:
  explicit Collector(const ir::LoweredFunc& f) : func_name_(f.name) {
    for (const ir::Buffer& b : f.args) buffer_index(b, true);
  }

  LoopTree finish() {
    // Children follow parents in pre-order, so a reverse sweep adds each loop's work to its
    // parent after the loop has collected its own children's.
    for (size_t i = tree_.loops.size(); i-- > 0;)
      if (tree_.loops[i].parent >= 0)
        tree_.loops[tree_.loops[i].parent].work += tree_.loops[i].work;
    KernelTotals& t = tree_.totals;
    double bytes = t.bytes_loaded + t.bytes_stored;
    t.arithmetic_intensity = bytes > 0 ? t.flops / bytes : 0;
    if (widest_float_ == 0) widest_float_ = widest_access_;
    t.vector_width = std::max(1, widest_float_);
    return std::move(tree_);
  }

  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::ForNode* op) override {
    LoopRecord r;
    r.var = op->var.node();
    r.kind = op->for_kind;
    ir::IntBound min = ir::const_int_bound(op->min, bounds_);
    ir::IntBound extent = ir::const_int_bound(op->extent, bounds_);
    r.min = min.min != ir::IntBound::kNegInf ? min.min : 0;
    r.extent = extent.max != ir::IntBound::kPosInf ? std::max<int64_t>(0, extent.max) : 1;
    r.parent = stack_.empty() ? -1 : stack_.back();
    r.outer_trips = trips_;
    int index = static_cast<int>(tree_.loops.size());
    if (r.parent >= 0) tree_.loops[r.parent].children.push_back(index);
    tree_.loops.push_back(r);

    double saved_trips = trips_, saved_parallel = parallel_;
    trips_ *= static_cast<double>(r.extent);
    if (r.kind == ir::ForKind::Parallel) {
      parallel_ *= static_cast<double>(r.extent);
      tree_.totals.parallel_extent = std::max(tree_.totals.parallel_extent, parallel_);
    }
    bounds_[r.var] = {r.min, r.min + std::max<int64_t>(0, r.extent - 1)};
    stack_.push_back(index);
    visit(op->body);
    stack_.pop_back();
    bounds_.erase(r.var);
    trips_ = saved_trips;
    parallel_ = saved_parallel;
  }

  void visit(const ir::StoreNode* op) override {
    visit(op->value);
    for (const ir::Expr& i : op->indices) visit(i);
    visit(op->predicate);
    if (!stack_.empty()) ++tree_.loops[stack_.back()].body_stores;
    int lanes = std::max<int>(op->value.type().lanes,
                              op->indices.empty() ? 1 : op->indices[0].type().lanes);
    add_site(op->buffer, op->indices, lanes, true);
  }

  void visit(const ir::LoadNode* op) override {
    ir::IRVisitor::visit(op);
    add_site(op->buffer, op->indices, op->type.lanes, false);
  }

  void visit(const ir::BinaryNode* op) override {
    if (is_float_arith(op)) {
      count_flops(op->type.lanes);
      widest_float_ = std::max<int>(widest_float_, op->type.lanes);
    }
    count_vector(op->type);
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::CallNode* op) override {
    if (op->call_kind == ir::CallKind::Pure && op->name == "fma" && op->type.is_float()) {
      count_flops(2 * op->type.lanes);
      widest_float_ = std::max<int>(widest_float_, op->type.lanes);
    }
    count_vector(op->type);
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::CastNode* op) override {
    count_vector(op->type);
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::SelectNode* op) override {
    count_vector(op->type);
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::IfThenElseNode* op) override {
    tree_.totals.branches += trips_;
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::AllocateNode* op) override {
    buffer_index(op->buffer, false);
    double elements = 1;
    for (const ir::Expr& d : op->buffer->shape) {
      ir::IntBound b = ir::const_int_bound(d, bounds_);
      elements *=
          b.max != ir::IntBound::kPosInf ? static_cast<double>(std::max<int64_t>(0, b.max)) : 1;
    }
    tree_.totals.local_bytes += elements * op->buffer->dtype.bytes();
    visit(op->body);
  }

  void visit(const ir::LetStmtNode* op) override {
    visit(op->value);
    bind(op->var, op->value, [&] { visit(op->body); });
  }

  void visit(const ir::LetNode* op) override {
    visit(op->value);
    bind(op->var, op->value, [&] { visit(op->body); });
  }

 private:
  int buffer_index(const ir::Buffer& b, bool is_arg) {
    auto it = buffer_ids_.find(b.get());
    if (it != buffer_ids_.end()) return it->second;
    int id = static_cast<int>(tree_.buffers.size());
    buffer_ids_[b.get()] = id;
    tree_.buffers.push_back({b->name, b->dtype.element(), b->scope, is_arg, false});
    return id;
  }

  void add_site(const ir::Buffer& b, const std::vector<ir::Expr>& indices, int lanes, bool store) {
    user_check(indices.size() == 1)
        << "cost model features need a lowered kernel (one flat index per access), but '"
        << func_name_ << "' accesses " << b->name << " with " << indices.size() << " indices";
    AccessSite s;
    s.buffer = buffer_index(b, false);
    s.loop = stack_.empty() ? -1 : stack_.back();
    s.index = lets_.empty() ? indices[0] : ir::substitute(indices[0], lets_);
    s.lanes = lanes;
    s.is_store = store;
    s.executions = trips_;
    tree_.sites.push_back(s);

    double bytes = trips_ * lanes * b->dtype.element().bytes();
    (store ? tree_.totals.bytes_stored : tree_.totals.bytes_loaded) += bytes;
    if (store) tree_.buffers[s.buffer].written = true;
    if (lanes > 1) tree_.totals.vector_ops += trips_;
    widest_access_ = std::max(widest_access_, lanes);
    add_work(trips_);
  }

  void count_flops(int per_execution) {
    tree_.totals.flops += trips_ * per_execution;
    add_work(trips_ * per_execution);
  }

  void count_vector(ir::DataType t) {
    if (t.is_vector()) tree_.totals.vector_ops += trips_;
  }

  void add_work(double w) {
    if (!stack_.empty()) tree_.loops[stack_.back()].work += w;
  }

  // Indices under a let see through it: the variable's value, itself in terms of loops.
  template <typename F>
  void bind(const ir::Var& v, const ir::Expr& value, F body) {
    lets_[v.node()] = lets_.empty() ? value : ir::substitute(value, lets_);
    body();
    lets_.erase(v.node());
  }

  std::string func_name_;
  LoopTree tree_;
  std::unordered_map<const ir::BufferNode*, int> buffer_ids_;
  std::vector<int> stack_;  // enclosing loops, outermost first
  double trips_ = 1;        // executions of the current statement: product of enclosing extents
  double parallel_ = 1;     // product of enclosing parallel extents
  ir::BoundMap bounds_;     // enclosing loop variables' ranges, for extents that are not constant
  ir::VarMap lets_;
  int widest_float_ = 0, widest_access_ = 1;
};

}  // namespace

LoopTree build_loop_tree(const ir::LoweredFunc& f) {
  Collector c(f);
  c.visit(f.body);
  return c.finish();
}

}  // namespace kiln::cost_model
