#include "compiler/te/schedule.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/substitute.h"

namespace kiln::te {

using ir::IterKind;

std::vector<IterVar> StageNode::root_axes() const {
  std::vector<IterVar> r = op()->axes;
  const auto& red = op()->reduce_axes();
  r.insert(r.end(), red.begin(), red.end());
  return r;
}

const IterAttr* StageNode::attr(const IterVar& iv) const {
  auto it = attrs.find(iv.get());
  return it == attrs.end() ? nullptr : &it->second;
}

IterVar Stage::axis(size_t i) const {
  const auto& axes = n_->op()->axes;
  user_check(i < axes.size()) << "stage '" << n_->op()->name << "' has " << axes.size()
                              << " axes; axis(" << i << ") does not exist";
  return axes[i];
}

IterVar Stage::reduce_axis(size_t i) const {
  const auto& axes = n_->op()->reduce_axes();
  user_check(i < axes.size()) << "stage '" << n_->op()->name << "' has " << axes.size()
                              << " reduce axes; reduce_axis(" << i << ") does not exist";
  return axes[i];
}

size_t Stage::leaf_index(const IterVar& iv, const char* primitive) const {
  user_check(iv != nullptr) << primitive << " on stage '" << n_->op()->name
                            << "': the loop is undefined";
  for (size_t i = 0; i < n_->leaf.size(); ++i)
    if (n_->leaf[i] == iv) return i;
  std::string loops;
  for (const IterVar& l : n_->leaf) loops += (loops.empty() ? "" : ", ") + l->var.name();
  user_error() << primitive << " on stage '" << n_->op()->name << "': '" << iv->var.name()
               << "' is not one of its current loops (" << loops
               << "); a loop that was split or fused is replaced by its parts";
  return 0;
}

static std::pair<IterVar, IterVar> do_split(StageNode* n, size_t at, const IterVar& parent,
                                            Expr factor, Expr nparts) {
  IterVar outer = ir::make_iter_var(parent->var.name() + ".outer", 0, Expr(), parent->kind);
  IterVar inner = ir::make_iter_var(parent->var.name() + ".inner", 0, Expr(), parent->kind);
  n->relations.push_back({Relation::Split, parent, outer, inner, nullptr, factor, nparts});
  n->leaf[at] = outer;
  n->leaf.insert(n->leaf.begin() + static_cast<long>(at) + 1, inner);
  return {outer, inner};
}

static void check_positive(const Expr& e, const std::string& what) {
  user_check(e.defined() && e.type().is_int()) << what << " must be an integer";
  if (auto c = ir::as_const_int(e)) user_check(*c > 0) << what << " must be positive, got " << *c;
}

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, Expr factor) {
  size_t at = leaf_index(parent, "split");
  check_positive(factor, "split factor of '" + parent->var.name() + "'");
  return do_split(n_, at, parent, std::move(factor), Expr());
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, Expr nparts) {
  size_t at = leaf_index(parent, "split_nparts");
  check_positive(nparts, "split nparts of '" + parent->var.name() + "'");
  return do_split(n_, at, parent, Expr(), std::move(nparts));
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  size_t a = leaf_index(outer, "fuse"), b = leaf_index(inner, "fuse");
  user_check(b == a + 1) << "fuse on stage '" << n_->op()->name << "': '" << outer->var.name()
                         << "' and '" << inner->var.name()
                         << "' must be adjacent loops, outer first";
  user_check(outer->kind == inner->kind)
      << "fuse on stage '" << n_->op()->name << "': cannot fuse a reduction loop with a spatial one";
  IterVar fused = ir::make_iter_var(outer->var.name() + "." + inner->var.name() + ".fused", 0,
                                    Expr(), outer->kind);
  n_->relations.push_back({Relation::Fuse, nullptr, outer, inner, fused, Expr(), Expr()});
  n_->leaf[a] = fused;
  n_->leaf.erase(n_->leaf.begin() + static_cast<long>(b));
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  std::vector<size_t> pos;
  for (const IterVar& iv : order) pos.push_back(leaf_index(iv, "reorder"));
  std::vector<size_t> sorted = pos;
  std::sort(sorted.begin(), sorted.end());
  user_check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())
      << "reorder on stage '" << n_->op()->name << "': a loop is named twice";
  std::vector<IterVar> leaf = n_->leaf;
  for (size_t i = 0; i < pos.size(); ++i) leaf[sorted[i]] = order[i];
  n_->leaf = std::move(leaf);
}

std::array<IterVar, 4> Stage::tile(const IterVar& x, const IterVar& y, Expr x_factor,
                                   Expr y_factor) {
  auto [xo, xi] = split(x, std::move(x_factor));
  auto [yo, yi] = split(y, std::move(y_factor));
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

void Stage::set_kind(const IterVar& iv, ir::ForKind k, const char* primitive) {
  leaf_index(iv, primitive);
  if (k == ir::ForKind::Parallel)
    user_check(iv->kind == IterKind::Spatial)
        << "parallel on stage '" << n_->op()->name << "': '" << iv->var.name()
        << "' is a reduction loop; parallel reductions would race";
  n_->attrs[iv.get()].for_kind = k;
}

void Stage::vectorize(const IterVar& iv) { set_kind(iv, ir::ForKind::Vectorized, "vectorize"); }
void Stage::unroll(const IterVar& iv) { set_kind(iv, ir::ForKind::Unrolled, "unroll"); }
void Stage::parallel(const IterVar& iv) { set_kind(iv, ir::ForKind::Parallel, "parallel"); }

void Stage::pragma(const IterVar& iv, const std::string& key, Expr value) {
  leaf_index(iv, "pragma");
  n_->attrs[iv.get()].pragmas[key] = std::move(value);
}

void Stage::tensorize(const IterVar& iv, TensorIntrin intrin) {
  size_t at = leaf_index(iv, "tensorize");
  user_check(intrin.emit != nullptr) << "tensorize with intrinsic '" << intrin.name
                                     << "' that has no emit function";
  user_check(intrin.extents.empty() || intrin.extents.size() == n_->leaf.size() - at)
      << "tensorize on stage '" << n_->op()->name << "': intrinsic '" << intrin.name << "' covers "
      << intrin.extents.size() << " loops but '" << iv->var.name() << "' has "
      << n_->leaf.size() - at << " loops inside it (itself included)";
  n_->attrs[iv.get()].tensorize = std::make_shared<const TensorIntrin>(std::move(intrin));
}

void Stage::compute_at(const Stage& parent, const IterVar& iv) {
  user_check(parent.n_ != n_) << "compute_at: stage '" << n_->op()->name
                              << "' cannot be computed inside itself";
  user_check(!n_->is_output) << "compute_at: '" << n_->op()->name
                             << "' is an output of the kernel and must be computed at the root";
  user_check(n_->op()->kind == OpKind::Compute)
      << "compute_at: '" << n_->op()->name << "' is a placeholder (an input)";
  Stage(parent.n_).leaf_index(iv, "compute_at");
  n_->attach = AttachKind::At;
  n_->attach_stage = parent.n_;
  n_->attach_ivar = iv;
}

void Stage::compute_inline() {
  user_check(!n_->is_output) << "compute_inline: '" << n_->op()->name
                             << "' is an output of the kernel and cannot be inlined";
  user_check(n_->op()->kind == OpKind::Compute)
      << "compute_inline: '" << n_->op()->name << "' is a placeholder (an input)";
  user_check(n_->op()->body.as<ir::ReduceNode>() == nullptr)
      << "compute_inline: '" << n_->op()->name << "' is a reduction; only element-wise stages "
      << "can be inlined";
  n_->attach = AttachKind::Inline;
  n_->attach_stage = nullptr;
  n_->attach_ivar = nullptr;
}

void Stage::set_scope(ir::MemScope scope) {
  user_check(n_->op()->kind == OpKind::Compute)
      << "set_scope: '" << n_->op()->name << "' is a placeholder (an input)";
  user_check(!n_->is_output) << "set_scope: '" << n_->op()->name
                             << "' is an output of the kernel and lives in its argument buffer";
  n_->scope = scope;
}

void Stage::compute_root() {
  n_->attach = AttachKind::Root;
  n_->attach_stage = nullptr;
  n_->attach_ivar = nullptr;
}

Schedule::Schedule(std::vector<Tensor> outputs) : outputs_(std::move(outputs)) {
  std::unordered_set<const ir::BufferNode*> seen;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (!seen.insert(t.buffer().get()).second) return;
    for (const Tensor& in : t.op()->inputs) visit(in);
    auto n = std::make_unique<StageNode>();
    n->tensor = t;
    n->leaf = n->root_axes();
    stages_.push_back(std::move(n));
  };
  for (const Tensor& t : outputs_) {
    user_check(t.defined()) << "Schedule: an output tensor is undefined";
    visit(t);
  }
  for (const Tensor& t : outputs_) stage_of(t.op())->is_output = true;
}

StageNode* Schedule::stage_of(const OperationNode* op) const {
  for (const auto& s : stages_)
    if (s->op()->buffer == op->buffer) return s.get();
  return nullptr;
}

Stage Schedule::operator[](const Tensor& t) const {
  StageNode* n = t.defined() ? stage_of(t.op()) : nullptr;
  user_check(n != nullptr) << "tensor '" << (t.defined() ? t.name() : "<undefined>")
                           << "' is not part of this schedule";
  return Stage(n);
}

size_t Schedule::position_of(const StageNode* s) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].get() == s) return i;
  internal_error() << "stage not in schedule";
  return 0;
}

StageNode* Schedule::insert_stage(Tensor t, size_t position) {
  auto n = std::make_unique<StageNode>();
  n->tensor = std::move(t);
  n->leaf = n->root_axes();
  StageNode* raw = n.get();
  stages_.insert(stages_.begin() + static_cast<long>(position), std::move(n));
  return raw;
}

namespace {
// Redirects every load of one buffer to another (same indices).
class ReplaceLoads : public ir::IRMutator {
 public:
  ReplaceLoads(const ir::BufferNode* from, Buffer to) : from_(from), to_(std::move(to)) {}
  using ir::IRMutator::mutate;

 protected:
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    if (l->buffer.get() != from_) return e;
    return ir::make_load(to_, l->indices, l->predicate);
  }

 private:
  const ir::BufferNode* from_;
  Buffer to_;
};

bool is_untouched(const StageNode* s) {
  return s->relations.empty() && s->attrs.empty() && s->attach == AttachKind::Root;
}
}  // namespace

Tensor Schedule::cache_write(const Tensor& t, ir::MemScope scope) {
  StageNode* s = (*this)[t].node();
  user_check(s->op()->kind == OpKind::Compute)
      << "cache_write: '" << t.name() << "' is a placeholder (an input)";
  user_check(is_untouched(s)) << "cache_write: '" << t.name()
                              << "' was already scheduled; call cache_write before other "
                                 "primitives on it";
  const OperationNode* old = s->op();
  // The cache computes the old body over fresh axes...
  std::vector<IterVar> cache_axes;
  ir::VarMap to_cache;
  for (const IterVar& a : old->axes) {
    cache_axes.push_back(ir::make_iter_var(a->var.name() + ".c", a->min, a->extent));
    to_cache[a->var.node()] = cache_axes.back()->var;
  }
  Buffer cache_buf = ir::make_buffer(old->name + ".local", old->buffer->dtype, old->buffer->shape,
                                     scope);
  Tensor cache =
      make_compute_op(old->name + ".local", cache_axes, ir::substitute(old->body, to_cache), cache_buf);
  // ...and `t` becomes a copy of the cache into the original buffer, over the original axes.
  std::vector<Expr> idx;
  for (const IterVar& a : old->axes) idx.push_back(a->var);
  Tensor copy = make_compute_op(old->name, old->axes, cache(idx), old->buffer);
  s->tensor = copy;
  s->leaf = s->root_axes();
  insert_stage(cache, position_of(s));
  return cache;
}

Tensor Schedule::cache_read(const Tensor& t, ir::MemScope scope, const std::vector<Tensor>& readers) {
  StageNode* src = (*this)[t].node();
  user_check(!readers.empty()) << "cache_read of '" << t.name() << "' needs at least one reader";
  std::vector<IterVar> axes;
  std::vector<Expr> idx;
  for (size_t d = 0; d < t.ndim(); ++d) {
    axes.push_back(ir::make_iter_var(t.name() + ".ax" + std::to_string(d), 0, t.shape()[d]));
    idx.push_back(axes.back()->var);
  }
  std::string name = t.name() + (scope == ir::MemScope::Local ? ".local" : ".global");
  Tensor cache = make_compute_op(name, axes, t(idx), ir::make_buffer(name, t.dtype(), t.shape(), scope));
  size_t first_reader = stages_.size();
  for (const Tensor& r : readers) {
    StageNode* rs = (*this)[r].node();
    user_check(rs->op()->kind == OpKind::Compute) << "cache_read: reader '" << r.name()
                                                  << "' is a placeholder";
    bool reads = std::find(rs->op()->inputs.begin(), rs->op()->inputs.end(), t) !=
                 rs->op()->inputs.end();
    user_check(reads) << "cache_read: '" << r.name() << "' does not read '" << t.name() << "'";
    const OperationNode* old = rs->op();
    ReplaceLoads replace(t.buffer().get(), cache.buffer());
    Tensor updated = make_compute_op(old->name, old->axes, replace.mutate(old->body), old->buffer);
    rs->tensor = updated;
    first_reader = std::min(first_reader, position_of(rs));
  }
  insert_stage(cache, std::max(position_of(src) + 1, std::min(first_reader, stages_.size())));
  return cache;
}

}  // namespace kiln::te
