// Schedules: how a tensor expression is computed: loop order, tiling, vectorization,
// parallelism, where intermediate results live. Nothing here changes *what* is computed.
//
//   Schedule s({C});
//   auto [io, ii] = s[C].split(s[C].axis(0), 8);
//   s[C].vectorize(ii);
//
// Each operation gets a Stage that records its loop transformations (split and fuse
// relations from the operation's root axes to the leaf loops, in loop order), loop
// annotations, and its attachment: at the root of the kernel, inlined into its consumers,
// or computed inside a loop of another stage (compute_at). Loop extents are derived at
// lowering, after bound inference, so a split of an attached stage's axis is legal before
// its extent is known.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "compiler/ir/stmt.h"
#include "compiler/te/tensor.h"

namespace kiln::te {

// What tensorize hands to an intrinsic: the region of the stage that the replaced loops
// cover, with the element indices of its first point in every buffer the body touches.
struct TensorizeRegion {
  Buffer output;
  std::vector<Expr> output_base;
  std::vector<std::pair<Buffer, std::vector<Expr>>> inputs;  // each load of the body
  std::vector<int64_t> extents;  // the replaced loops, outermost first
  bool reduction_update = false; // true when the region accumulates into the output
};

// A target instruction (or short sequence) that replaces a loop nest. `extents` are the
// loop extents it covers, outermost first; `emit` builds the replacement statement.
struct TensorIntrin {
  std::string name;
  std::vector<int64_t> extents;
  std::function<ir::Stmt(const TensorizeRegion&)> emit;
  // Whether `emit` guards the region's points itself (from the output's shape and
  // output_base), so that it may be handed a tile that a non-dividing split cuts short.
  // Otherwise every tile must be whole, which lowering proves.
  bool guards_partial_tiles = false;
};

enum class AttachKind { Root, Inline, At };

struct Relation {
  enum Kind { Split, Fuse } kind;
  IterVar parent, outer, inner;  // Split: parent -> (outer, inner)
  IterVar fused;                 // Fuse: (outer, inner) -> fused
  Expr factor;                   // Split: inner extent, or undefined when nparts is given
  Expr nparts;                   // Split: outer extent, or undefined when factor is given
};

struct IterAttr {
  ir::ForKind for_kind = ir::ForKind::Serial;
  std::map<std::string, Expr> pragmas;
  std::shared_ptr<const TensorIntrin> tensorize;
};

struct StageNode {
  Tensor tensor;
  std::vector<IterVar> leaf;  // loops, outermost first
  std::vector<Relation> relations;
  std::unordered_map<const ir::IterVarNode*, IterAttr> attrs;
  AttachKind attach = AttachKind::Root;
  StageNode* attach_stage = nullptr;
  IterVar attach_ivar;
  bool is_output = false;
  // Where the stage's buffer lives when it is realized; unset keeps the buffer's own scope.
  std::optional<ir::MemScope> scope;

  const OperationNode* op() const { return tensor.op(); }
  std::vector<IterVar> root_axes() const;  // spatial axes then reduce axes
  const IterAttr* attr(const IterVar& iv) const;
};

class Stage {
 public:
  explicit Stage(StageNode* n) : n_(n) {}
  StageNode* node() const { return n_; }

  IterVar axis(size_t i) const;
  IterVar reduce_axis(size_t i) const;
  const std::vector<IterVar>& leaf_axes() const { return n_->leaf; }

  std::pair<IterVar, IterVar> split(const IterVar& parent, Expr factor);
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, Expr nparts);
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  void reorder(const std::vector<IterVar>& order);
  // Splits x and y and orders the loops (x.outer, y.outer, x.inner, y.inner).
  std::array<IterVar, 4> tile(const IterVar& x, const IterVar& y, Expr x_factor, Expr y_factor);

  void vectorize(const IterVar& iv);
  void unroll(const IterVar& iv);
  void parallel(const IterVar& iv);
  void pragma(const IterVar& iv, const std::string& key, Expr value);
  void tensorize(const IterVar& iv, TensorIntrin intrin);

  void compute_at(const Stage& parent, const IterVar& iv);
  void compute_inline();
  void compute_root();
  // Keeps the stage's results in registers/stack (Local) or in the kernel's workspace
  // (Global) when it is computed inside another stage's loop.
  void set_scope(ir::MemScope scope);

 private:
  size_t leaf_index(const IterVar& iv, const char* primitive) const;
  void set_kind(const IterVar& iv, ir::ForKind k, const char* primitive);
  StageNode* n_;
};

class Schedule {
 public:
  // One stage per operation reachable from `outputs`, producers before consumers.
  explicit Schedule(std::vector<Tensor> outputs);

  Stage operator[](const Tensor& t) const;
  const std::vector<std::unique_ptr<StageNode>>& stages() const { return stages_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }

  // Computes `t` into a new buffer of `scope` (default: a local, register-sized one) and
  // makes `t` a copy of it; returns the new tensor, whose stage is then usually attached
  // inside a loop of `t` with compute_at. `t` must not have been scheduled yet.
  Tensor cache_write(const Tensor& t, ir::MemScope scope = ir::MemScope::Local);
  // Copies `t` into a new buffer that `readers` read instead of `t`.
  Tensor cache_read(const Tensor& t, ir::MemScope scope, const std::vector<Tensor>& readers);

  StageNode* stage_of(const OperationNode* op) const;

 private:
  StageNode* insert_stage(Tensor t, size_t position);
  size_t position_of(const StageNode* s) const;

  std::vector<Tensor> outputs_;
  std::vector<std::unique_ptr<StageNode>> stages_;
};

}  // namespace kiln::te
