#include "compiler/lower/verify.h"

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"

namespace kiln::lower {

namespace {

// Walks IR knowing which variables are bound where: a loop's or a let's variable in its
// body only. Subclasses see each use of a variable through use().
class ScopedWalk : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;

 protected:
  virtual void use(const ir::VarNode* v, bool bound) = 0;

  void visit(const ir::VarNode* op) override { use(op, bound_.count(op) > 0); }
  void visit(const ir::LetNode* op) override {
    visit(op->value);
    in_scope(op->var, [&] { visit(op->body); });
  }
  void visit(const ir::LetStmtNode* op) override {
    visit(op->value);
    in_scope(op->var, [&] { visit(op->body); });
  }
  void visit(const ir::ForNode* op) override {
    visit(op->min);
    visit(op->extent);
    in_scope(op->var, [&] { visit(op->body); });
  }

 private:
  template <typename F>
  void in_scope(const ir::Var& v, F body) {
    bool added = bound_.insert(v.node()).second;  // a rebinding keeps the outer scope
    body();
    if (added) bound_.erase(v.node());
  }
  VarSet bound_;
};

class FreeVariables : public ScopedWalk {
 public:
  std::vector<const ir::VarNode*> found;

 protected:
  void use(const ir::VarNode* v, bool bound) override {
    if (!bound && seen_.insert(v).second) found.push_back(v);
  }

 private:
  VarSet seen_;
};

class Verifier : public ScopedWalk {
 public:
  Verifier(const ir::LoweredFunc& f, const std::string& pass, const Invariants& invariants,
           const VarSet& free_vars)
      : f_(f), pass_(pass), invariants_(invariants), free_vars_(free_vars) {
    for (const ir::Buffer& b : f.args) buffers_.insert(b.get());
  }
  using ScopedWalk::visit;

 protected:
  void fail(const std::string& what) {
    internal_error() << "after pass '" << pass_ << "': ill-formed IR in kernel '" << f_.name
                     << "': " << what;
  }
  void use(const ir::VarNode* v, bool bound) override {
    if (!bound && !free_vars_.count(v))
      fail("variable '" + v->name + "' is used outside its scope");
  }
  void check_access(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    if (!buffers_.count(b.get())) fail("buffer '" + b->name + "' is used but not defined");
    if (invariants_.flat_accesses && idx.size() != 1)
      fail("access to '" + b->name + "' is not flattened");
  }
  void visit(const ir::LoadNode* op) override {
    check_access(op->buffer, op->indices);
    ScopedWalk::visit(op);
  }
  void visit(const ir::StoreNode* op) override {
    check_access(op->buffer, op->indices);
    // Before flattening a vector store may index one dimension with a ramp and the others
    // with scalars, so lanes are comparable only once there is one index.
    if (invariants_.flat_accesses && op->value.type().lanes != op->indices[0].type().lanes)
      fail("store to '" + op->buffer->name + "' has mismatched value and index lanes");
    ScopedWalk::visit(op);
  }
  void visit(const ir::ReduceNode*) override { fail("a reduction is left"); }
  void visit(const ir::ForNode* op) override {
    if (invariants_.no_vector_loops && op->for_kind == ir::ForKind::Vectorized)
      fail("loop '" + op->var.name() + "' is still marked vectorized");
    ScopedWalk::visit(op);
  }
  void visit(const ir::AllocateNode* op) override {
    bool added = buffers_.insert(op->buffer.get()).second;
    visit(op->body);
    if (added) buffers_.erase(op->buffer.get());
  }

 private:
  const ir::LoweredFunc& f_;
  const std::string& pass_;
  const Invariants& invariants_;
  const VarSet& free_vars_;
  std::unordered_set<const ir::BufferNode*> buffers_;
};

}  // namespace

void verify_ir(const ir::LoweredFunc& f, const std::string& after_pass,
               const Invariants& invariants, const VarSet& free_vars) {
  Verifier(f, after_pass, invariants, free_vars).visit(f.body);
}

void verify_lowered(const ir::LoweredFunc& f, const std::string& after_pass) {
  verify_ir(f, after_pass, Invariants::all());
}

std::vector<const ir::VarNode*> free_variables(const ir::Stmt& s) {
  FreeVariables walk;
  walk.visit(s);
  return walk.found;
}

}  // namespace kiln::lower
