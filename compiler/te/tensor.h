// Tensor expressions: what a kernel computes, independent of how (that is the Schedule).
//
//   Tensor A = placeholder({M, K}, f32, "A");
//   IterVar k = reduce_axis(K, "k");
//   Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
//
// Every tensor is the single output of one Operation: a placeholder (a kernel input) or a
// compute (an index lambda, possibly a reduction). Reading a tensor, `A(i, k)`, is a Load
// of its buffer, so tensor expressions are ordinary IR expressions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/op.h"

namespace kiln::te {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

enum class OpKind { Placeholder, Compute };

// Tensors are indexed by expressions, or directly by an axis (its variable).
inline Expr index_of(const Expr& e) { return e; }
inline Expr index_of(const IterVar& iv) { return iv->var; }
inline Expr index_of(int v) { return Expr(v); }
inline Expr index_of(int64_t v) { return Expr(v); }

struct OperationNode;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const OperationNode> op) : op_(std::move(op)) {}

  const OperationNode* op() const { return op_.get(); }
  const std::shared_ptr<const OperationNode>& op_ptr() const { return op_; }
  bool defined() const { return op_ != nullptr; }
  const Buffer& buffer() const;
  const std::string& name() const;
  DataType dtype() const;
  const std::vector<Expr>& shape() const;
  size_t ndim() const { return shape().size(); }

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... I>
  Expr operator()(I... i) const {
    return (*this)(std::vector<Expr>{index_of(i)...});
  }
  // A tensor is identified by its buffer: cache_write and cache_read replace the operation
  // that writes a buffer, and the old handle still names the same tensor.
  bool operator==(const Tensor& o) const;

 private:
  std::shared_ptr<const OperationNode> op_;
};

struct OperationNode {
  OpKind kind;
  std::string name;
  Buffer buffer;                // the output
  std::vector<IterVar> axes;    // compute: one spatial axis per output dimension
  Expr body;                    // compute: the value at `axes` (a Reduce for reductions)
  std::vector<Tensor> inputs;   // compute: tensors its body reads, in first-read order

  // The reduction axes of the body, empty if it is not a reduction.
  const std::vector<IterVar>& reduce_axes() const;
  ~OperationNode();
};

Tensor placeholder(std::vector<Expr> shape, DataType dtype, const std::string& name);

// The general form: `f` gets one variable per output dimension.
Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& f, const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& f,
               const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& f,
               const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& f,
               const std::string& name);

// Builds a compute op from ready-made axes and body (used by schedule transformations).
Tensor make_compute_op(const std::string& name, std::vector<IterVar> axes, Expr body,
                       Buffer output = nullptr);

IterVar reduce_axis(Expr extent, const std::string& name);
Expr sum(Expr source, std::vector<IterVar> axes);
Expr max_reduce(Expr source, std::vector<IterVar> axes);
Expr min_reduce(Expr source, std::vector<IterVar> axes);

// The tensor whose output buffer is `b`, if it is still alive (used to walk the graph from
// the loads in a body back to the operations that produce them).
Tensor tensor_of_buffer(const ir::BufferNode* b);

}  // namespace kiln::te
