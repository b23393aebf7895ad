// Statements of kiln's IR: loops, stores, allocations, conditionals. Immutable like Expr,
// and like Expr nodes each lists its fields once in `fields()` (see ir/expr.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/ir/expr.h"

namespace kiln::ir {

enum class StmtKind : uint8_t { LetStmt, Store, For, Allocate, Seq, IfThenElse, Evaluate };

struct StmtNode {
  const StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  StmtKind kind() const { return node_->kind; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

template <StmtKind K>
struct StmtNodeOf : StmtNode {
  static constexpr StmtKind kKind = K;
  StmtNodeOf() : StmtNode(K) {}
};

struct LetStmtNode : StmtNodeOf<StmtKind::LetStmt> {
  Var var;
  Expr value;
  Stmt body;
  auto fields() const { return std::tie(var, value, body); }
};
struct StoreNode : StmtNodeOf<StmtKind::Store> {
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  Expr predicate;  // optional: lanes that are written
  auto fields() const { return std::tie(buffer, value, indices, predicate); }
};

// Serial: a plain loop. Parallel: iterations spread over the runtime's thread pool.
// Vectorized: becomes vector instructions (needs a constant extent). Unrolled: copied out.
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled };
const char* for_kind_name(ForKind k);
// A loop's pragmas by name. They hold constants: compared structurally, but not walked.
using Annotations = std::map<std::string, Expr>;

struct ForNode : StmtNodeOf<StmtKind::For> {
  Var var;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  Annotations annotations;  // pragmas (e.g. "unroll_explicit")
  auto fields() const { return std::tie(var, min, extent, for_kind, body, annotations); }
};
struct AllocateNode : StmtNodeOf<StmtKind::Allocate> {
  Buffer buffer;  // scope Local: on the stack of the kernel (or of a parallel task)
  Stmt body;
  auto fields() const { return std::tie(buffer, body); }
};
struct SeqNode : StmtNodeOf<StmtKind::Seq> {
  std::vector<Stmt> stmts;
  auto fields() const { return std::tie(stmts); }
};
struct IfThenElseNode : StmtNodeOf<StmtKind::IfThenElse> {
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  auto fields() const { return std::tie(condition, then_case, else_case); }
};
struct EvaluateNode : StmtNodeOf<StmtKind::Evaluate> {
  Expr value;
  auto fields() const { return std::tie(value); }
};

Stmt make_let_stmt(Var var, Expr value, Stmt body);
Stmt make_store(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate = Expr());
Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body,
              Annotations annotations = {});
Stmt make_allocate(Buffer buffer, Stmt body);
// Flattens nested sequences and drops undefined statements; one statement stays itself.
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_if(Expr condition, Stmt then_case, Stmt else_case = Stmt());
Stmt make_evaluate(Expr value);

}  // namespace kiln::ir
