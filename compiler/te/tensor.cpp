#include "compiler/te/tensor.h"

#include <mutex>
#include <unordered_map>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"

namespace kiln::te {

namespace {

// Buffers are IR objects and know nothing of operations; this side table maps an output
// buffer back to the operation that writes it. Entries die with their operation.
struct Registry {
  std::mutex mu;
  std::unordered_map<const ir::BufferNode*, std::weak_ptr<const OperationNode>> ops;
};
Registry& registry() {
  static Registry r;
  return r;
}

std::shared_ptr<const OperationNode> register_op(OperationNode n) {
  auto op = std::make_shared<const OperationNode>(std::move(n));
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.ops[op->buffer.get()] = op;
  return op;
}

void check_shape(const std::vector<Expr>& shape, const std::string& name) {
  for (size_t d = 0; d < shape.size(); ++d) {
    user_check(shape[d].defined() && shape[d].type().is_int())
        << "tensor '" << name << "': dimension " << d << " is not an integer";
    if (auto c = ir::as_const_int(shape[d]))
      user_check(*c > 0) << "tensor '" << name << "': dimension " << d << " is " << *c
                         << "; every dimension must be positive";
  }
}

std::vector<Tensor> collect_inputs(const Expr& body) {
  std::vector<Tensor> inputs;
  ir::for_each_expr(body, [&](const Expr& e) {
    const auto* load = e.as<ir::LoadNode>();
    if (!load) return;
    Tensor t = tensor_of_buffer(load->buffer.get());
    internal_check(t.defined()) << "load of buffer " << load->buffer->name
                                << " that no live tensor produces";
    for (const Tensor& x : inputs)
      if (x == t) return;
    inputs.push_back(t);
  });
  return inputs;
}

}  // namespace

OperationNode::~OperationNode() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.ops.find(buffer.get());
  if (it != r.ops.end() && it->second.expired()) r.ops.erase(it);
}

const std::vector<IterVar>& OperationNode::reduce_axes() const {
  static const std::vector<IterVar> kNone;
  if (const auto* r = body.as<ir::ReduceNode>()) return r->axes;
  return kNone;
}

const Buffer& Tensor::buffer() const { return op_->buffer; }
bool Tensor::operator==(const Tensor& o) const {
  if (!op_ || !o.op_) return op_ == o.op_;
  return op_->buffer == o.op_->buffer;
}
const std::string& Tensor::name() const { return op_->name; }
DataType Tensor::dtype() const { return op_->buffer->dtype; }
const std::vector<Expr>& Tensor::shape() const { return op_->buffer->shape; }

Expr Tensor::operator()(std::vector<Expr> indices) const {
  user_check(indices.size() == ndim()) << "tensor '" << name() << "' has " << ndim()
                                       << " dimensions but is indexed with " << indices.size();
  return ir::make_load(buffer(), std::move(indices));
}

Tensor tensor_of_buffer(const ir::BufferNode* b) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.ops.find(b);
  if (it == r.ops.end()) return Tensor();
  return Tensor(it->second.lock());
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, const std::string& name) {
  check_shape(shape, name);
  OperationNode n;
  n.kind = OpKind::Placeholder;
  n.name = name;
  n.buffer = ir::make_buffer(name, dtype, std::move(shape));
  return Tensor(register_op(std::move(n)));
}

Tensor make_compute_op(const std::string& name, std::vector<IterVar> axes, Expr body,
                       Buffer output) {
  std::vector<Expr> shape;
  for (const IterVar& a : axes) shape.push_back(a->extent);
  check_shape(shape, name);
  if (body.as<ir::ReduceNode>() == nullptr) {
    ir::for_each_expr(body, [&](const Expr& e) {
      user_check(e.as<ir::ReduceNode>() == nullptr)
          << "compute '" << name << "': a reduction may only be the whole body, not part of it";
    });
  }
  OperationNode n;
  n.kind = OpKind::Compute;
  n.name = name;
  n.buffer = output ? output : ir::make_buffer(name, body.type(), shape);
  n.axes = std::move(axes);
  n.inputs = collect_inputs(body);
  n.body = std::move(body);
  return Tensor(register_op(std::move(n)));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               const std::string& name) {
  check_shape(shape, name);
  static const char* kNames[] = {"i", "j", "k", "l", "m", "n"};
  std::vector<IterVar> axes;
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string n = shape.size() <= 6 ? kNames[d] : "ax" + std::to_string(d);
    axes.push_back(ir::make_iter_var(n, 0, shape[d]));
    vars.push_back(axes.back()->var);
  }
  Expr body = f(vars);
  user_check(body.defined()) << "compute '" << name << "': the lambda returned no expression";
  return make_compute_op(name, std::move(axes), std::move(body));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& f, const std::string& name) {
  user_check(shape.size() == 1) << "compute '" << name << "': 1-argument lambda for a "
                                << shape.size() << "-d shape";
  return compute(shape, [&](const std::vector<Var>& v) { return f(v[0]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& f,
               const std::string& name) {
  user_check(shape.size() == 2) << "compute '" << name << "': 2-argument lambda for a "
                                << shape.size() << "-d shape";
  return compute(shape, [&](const std::vector<Var>& v) { return f(v[0], v[1]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& f,
               const std::string& name) {
  user_check(shape.size() == 3) << "compute '" << name << "': 3-argument lambda for a "
                                << shape.size() << "-d shape";
  return compute(shape, [&](const std::vector<Var>& v) { return f(v[0], v[1], v[2]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& f,
               const std::string& name) {
  user_check(shape.size() == 4) << "compute '" << name << "': 4-argument lambda for a "
                                << shape.size() << "-d shape";
  return compute(shape, [&](const std::vector<Var>& v) { return f(v[0], v[1], v[2], v[3]); },
                 name);
}

IterVar reduce_axis(Expr extent, const std::string& name) {
  if (auto c = ir::as_const_int(extent))
    user_check(*c > 0) << "reduce_axis '" << name << "' has extent " << *c << "; must be positive";
  return ir::make_iter_var(name, 0, std::move(extent), ir::IterKind::Reduce);
}

static Expr reduce(ir::ReduceOp op, Expr source, std::vector<IterVar> axes, const char* what) {
  user_check(!axes.empty()) << what << "() needs at least one reduce_axis";
  for (const IterVar& a : axes)
    user_check(a->kind == ir::IterKind::Reduce)
        << what << "() over '" << a->var.name() << "', which is not a reduce_axis";
  return ir::make_reduce(op, std::move(source), std::move(axes));
}
Expr sum(Expr source, std::vector<IterVar> axes) {
  return reduce(ir::ReduceOp::Sum, std::move(source), std::move(axes), "sum");
}
Expr max_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ir::ReduceOp::Max, std::move(source), std::move(axes), "max_reduce");
}
Expr min_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ir::ReduceOp::Min, std::move(source), std::move(axes), "min_reduce");
}

}  // namespace kiln::te
