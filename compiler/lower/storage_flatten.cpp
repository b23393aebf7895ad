#include "compiler/lower/storage_flatten.h"

#include <unordered_map>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"

namespace kiln::lower {

using ir::Buffer;
using ir::Expr;
using ir::Stmt;

namespace {

class Flattener : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

  Buffer flat(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    if (b->shape.size() == 1) return flat_[b.get()] = b;
    Expr size = Expr(1);
    for (const Expr& d : b->shape) size = size * d;
    Buffer f = ir::make_buffer(b->name, b->dtype, {ir::simplify(size)}, b->scope);
    return flat_[b.get()] = f;
  }

  Expr index(const Buffer& b, const std::vector<Expr>& idx) {
    internal_check(idx.size() == b->shape.size())
        << "access to " << b->name << " with " << idx.size() << " indices for "
        << b->shape.size() << " dimensions";
    Expr flat = idx[0];
    for (size_t d = 1; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
    return ir::simplify(flat);
  }

 protected:
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    return ir::make_load(flat(l->buffer), {index(l->buffer, l->indices)}, l->predicate);
  }
  Stmt mutate(const ir::StoreNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* st = s.as<ir::StoreNode>();
    return ir::make_store(flat(st->buffer), st->value, {index(st->buffer, st->indices)},
                          st->predicate);
  }
  Stmt mutate(const ir::AllocateNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* a = s.as<ir::AllocateNode>();
    return ir::make_allocate(flat(a->buffer), a->body);
  }

 private:
  std::unordered_map<const ir::BufferNode*, Buffer> flat_;
};

}  // namespace

Stmt flatten_storage(const Stmt& s, std::vector<Buffer>& args) {
  Flattener f;
  for (Buffer& b : args) b = f.flat(b);
  return f.mutate(s);
}

}  // namespace kiln::lower
