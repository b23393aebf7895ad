#include "lower/verify.h"

#include <unordered_set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace kiln::lower {

namespace {

class Verifier : public ir::IRVisitor {
 public:
  explicit Verifier(const std::string& pass) : pass_(pass) {}
  std::unordered_set<const ir::VarNode*> vars;
  std::unordered_set<const ir::BufferNode*> buffers;
  using ir::IRVisitor::visit;

 protected:
  void fail(const std::string& what) {
    internal_error() << "IR after pass '" << pass_ << "' is ill-formed: " << what;
  }
  void visit(const ir::VarNode* op) override {
    if (!vars.count(op)) fail("variable '" + op->name + "' is used outside its scope");
  }
  void check_access(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    if (!buffers.count(b.get())) fail("buffer '" + b->name + "' is used but not defined");
    if (idx.size() != 1) fail("access to '" + b->name + "' is not flattened");
  }
  void visit(const ir::LoadNode* op) override {
    check_access(op->buffer, op->indices);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::StoreNode* op) override {
    check_access(op->buffer, op->indices);
    if (op->value.type().lanes != op->indices[0].type().lanes)
      fail("store to '" + op->buffer->name + "' has mismatched value and index lanes");
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::ReduceNode*) override { fail("a reduction is left"); }
  // A let's variable is in scope in its body only, like a loop's.
  void visit(const ir::LetNode* op) override {
    visit(op->value);
    vars.insert(op->var.node());
    visit(op->body);
    vars.erase(op->var.node());
  }
  void visit(const ir::LetStmtNode* op) override {
    visit(op->value);
    vars.insert(op->var.node());
    visit(op->body);
    vars.erase(op->var.node());
  }
  void visit(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::Vectorized)
      fail("loop '" + op->var.name() + "' is still marked vectorized");
    visit(op->min);
    visit(op->extent);
    vars.insert(op->var.node());
    visit(op->body);
    vars.erase(op->var.node());
  }
  void visit(const ir::AllocateNode* op) override {
    buffers.insert(op->buffer.get());
    visit(op->body);
    buffers.erase(op->buffer.get());
  }

 private:
  const std::string& pass_;
};

}  // namespace

void verify_lowered(const ir::LoweredFunc& f, const std::string& after_pass) {
  Verifier v(after_pass);
  for (const ir::Buffer& b : f.args) v.buffers.insert(b.get());
  v.visit(f.body);
}

}  // namespace kiln::lower
