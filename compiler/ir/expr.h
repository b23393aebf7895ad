// Expressions of kiln's IR: immutable nodes shared through Expr handles.
//
// A node's kind tag (ExprKind) replaces RTTI for dispatch; `e.as<AddNode>()` returns the
// node or nullptr. Nodes are built only through the `make_*` functions and operators in
// ir/op.h, which check their operands, so every Expr in the program is well typed.
// Variables compare by identity: two Vars named "i" are different variables.
//
// Each node declares its fields once, in `fields()`: a std::tie of its members, for nodes
// with children in the order their make_* function takes them (the mutator rebuilds through
// it). The visitor's default walk, the mutator's rebuild, structural equality and hashing
// are all derived from that list (ir/fields.h says how each kind of field is treated), so a
// new field is a member plus its name in fields().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/ir/type.h"

namespace kiln::ir {

enum class ExprKind : uint8_t {
  IntImm, FloatImm, StringImm, Var,
  // binary arithmetic; Div/Mod truncate toward zero, FloorDiv/FloorMod round toward -inf
  Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,
  // comparisons and logic (result bool, lanes of the operands)
  EQ, NE, LT, LE, GT, GE, And, Or, Not,
  Select, Cast, Load, Ramp, Broadcast, Call, Let, Reduce,
};

struct ExprNode {
  const ExprKind kind;
  const DataType type;
  ExprNode(ExprKind k, DataType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  // Integer literals become i64 index constants; see ir/op.h for typed constants.
  Expr(int v);      // NOLINT(google-explicit-constructor)
  Expr(int64_t v);  // NOLINT(google-explicit-constructor)

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ExprKind kind() const { return node_->kind; }
  DataType type() const { return node_->type; }
  template <typename T>
  const T* as() const {
    return node_ && T::is(node_->kind) ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  const std::shared_ptr<const ExprNode>& ptr() const { return node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

template <ExprKind K>
struct ExprNodeOf : ExprNode {
  static constexpr ExprKind kKind = K;
  static bool is(ExprKind k) { return k == K; }
  explicit ExprNodeOf(DataType t) : ExprNode(K, t) {}
};

struct IntImmNode : ExprNodeOf<ExprKind::IntImm> {
  int64_t value;
  auto fields() const { return std::tie(value); }
  IntImmNode(DataType t, int64_t v) : ExprNodeOf(t), value(v) {}
};
struct FloatImmNode : ExprNodeOf<ExprKind::FloatImm> {
  double value;
  auto fields() const { return std::tie(value); }
  FloatImmNode(DataType t, double v) : ExprNodeOf(t), value(v) {}
};
struct StringImmNode : ExprNodeOf<ExprKind::StringImm> {
  std::string value;
  auto fields() const { return std::tie(value); }
  explicit StringImmNode(std::string v) : ExprNodeOf(DataType::handle()), value(std::move(v)) {}
};
// No fields(): a variable is compared and hashed by identity; its name is for printing.
struct VarNode : ExprNodeOf<ExprKind::Var> {
  std::string name;
  VarNode(DataType t, std::string n) : ExprNodeOf(t), name(std::move(n)) {}
};

// A variable: an Expr known to hold a VarNode.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(const std::string& name, DataType t = DataType::index());
  explicit Var(const Expr& e);  // checks that e is a Var
  const VarNode* node() const { return static_cast<const VarNode*>(get()); }
  const std::string& name() const { return node()->name; }
};

// Every binary operator shares one node layout; the kind says which operator it is.
struct BinaryNode : ExprNode {
  static bool is(ExprKind k) { return k >= ExprKind::Add && k <= ExprKind::Or; }
  Expr a, b;
  auto fields() const { return std::tie(kind, a, b); }
  BinaryNode(ExprKind k, DataType t, Expr a_, Expr b_)
      : ExprNode(k, t), a(std::move(a_)), b(std::move(b_)) {}
};
struct NotNode : ExprNodeOf<ExprKind::Not> {
  Expr a;
  auto fields() const { return std::tie(a); }
  explicit NotNode(Expr a_) : ExprNodeOf(a_.type()), a(std::move(a_)) {}
};
struct SelectNode : ExprNodeOf<ExprKind::Select> {
  Expr condition, true_value, false_value;
  auto fields() const { return std::tie(condition, true_value, false_value); }
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNodeOf(t.type()), condition(std::move(c)), true_value(std::move(t)),
        false_value(std::move(f)) {}
};
struct CastNode : ExprNodeOf<ExprKind::Cast> {
  Expr value;
  auto fields() const { return std::tie(type, value); }
  CastNode(DataType t, Expr v) : ExprNodeOf(t), value(std::move(v)) {}
};

// A memory buffer: a named region of `dtype` elements with a shape. Before storage
// flattening loads and stores index it with one expression per dimension; afterwards with
// a single flat index. `data` is the handle variable that codegen binds to its address.
enum class MemScope : uint8_t { Global, Local };
struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  MemScope scope;
  Var data;
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer make_buffer(const std::string& name, DataType dtype, std::vector<Expr> shape,
                   MemScope scope = MemScope::Global);

struct LoadNode : ExprNodeOf<ExprKind::Load> {
  Buffer buffer;
  std::vector<Expr> indices;
  Expr predicate;  // optional vector of bool: lanes that are read (others are undefined)
  auto fields() const { return std::tie(buffer, indices, predicate); }
  LoadNode(DataType t, Buffer b, std::vector<Expr> i, Expr p)
      : ExprNodeOf(t), buffer(std::move(b)), indices(std::move(i)), predicate(std::move(p)) {}
};
struct RampNode : ExprNodeOf<ExprKind::Ramp> {  // base, base+stride, ... (lanes values)
  Expr base, stride;
  int lanes;
  auto fields() const { return std::tie(base, stride, lanes); }
  RampNode(Expr b, Expr s, int l)
      : ExprNodeOf(b.type().with_lanes(l)), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};
struct BroadcastNode : ExprNodeOf<ExprKind::Broadcast> {
  Expr value;
  int lanes;
  auto fields() const { return std::tie(value, lanes); }
  BroadcastNode(Expr v, int l) : ExprNodeOf(v.type().with_lanes(l)), value(std::move(v)), lanes(l) {}
};

// Pure: a math function kiln defines (e.g. "fma"), lowered by codegen.
// LLVMIntrinsic: an LLVM intrinsic by name ("llvm.x86.avx512bf16.dpbf16ps.512").
// Reinterpret: bit-cast of args[0] to the node's type (same total bits).
// TensorIntrinsic: a target instruction by kiln name ("pair_dot_bf16"), which tensorized
// tiles call (schedules/intrinsics.h); each codegen architecture maps the name and the
// argument types to its LLVM intrinsic, or rejects a target without the instruction.
// Shuffle: lanes picked from two vectors, args = {a, b, i0, i1, ...}: lane l of the result is
// lane i_l of a ++ b (constant indices; ir/op.h: make_shuffle). Not lanewise, so a vector
// loop cannot widen it; register transposes build their networks of it.
// RangeCheck: "in_range"(v, lo, hi) is v when lo <= v < hi; otherwise the kernel stops there
// and returns KILN_STATUS_INDEX_OUT_OF_RANGE (kernel_abi.h). Indices a model computes at run
// time are checked so (ONNX makes one out of range an error), never clamped or read past.
enum class CallKind : uint8_t { Pure, LLVMIntrinsic, Reinterpret, TensorIntrinsic, Shuffle, RangeCheck };
struct CallNode : ExprNodeOf<ExprKind::Call> {
  std::string name;
  std::vector<Expr> args;
  CallKind call_kind;
  auto fields() const { return std::tie(type, name, args, call_kind); }
  CallNode(DataType t, std::string n, std::vector<Expr> a, CallKind k)
      : ExprNodeOf(t), name(std::move(n)), args(std::move(a)), call_kind(k) {}
};
struct LetNode : ExprNodeOf<ExprKind::Let> {
  Var var;
  Expr value, body;
  auto fields() const { return std::tie(var, value, body); }
  LetNode(Var v, Expr val, Expr b)
      : ExprNodeOf(b.type()), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};

// An iteration variable with its domain [min, min + extent). Spatial for output axes,
// Reduce for reduction axes (tensor expressions and reductions use them).
enum class IterKind : uint8_t { Spatial, Reduce };
struct IterVarNode {
  Var var;
  Expr min, extent;
  IterKind kind;
};
using IterVar = std::shared_ptr<const IterVarNode>;
IterVar make_iter_var(const std::string& name, Expr min, Expr extent,
                      IterKind kind = IterKind::Spatial);

// A commutative reduction of `source` over `axes`; only appears as the body of a compute.
enum class ReduceOp : uint8_t { Sum, Max, Min };
struct ReduceNode : ExprNodeOf<ExprKind::Reduce> {
  ReduceOp op;
  Expr source;
  std::vector<IterVar> axes;
  auto fields() const { return std::tie(op, source, axes); }
  ReduceNode(ReduceOp o, Expr s, std::vector<IterVar> a)
      : ExprNodeOf(s.type()), op(o), source(std::move(s)), axes(std::move(a)) {}
};

// The identity element of a reduction for a type (0 for sum, -inf/lowest for max ...).
Expr reduce_identity(ReduceOp op, DataType t);
// Combines an accumulator with a new value.
Expr reduce_combine(ReduceOp op, Expr acc, Expr value);

}  // namespace kiln::ir
