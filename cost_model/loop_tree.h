// One walk over a lowered kernel that records what the cost model's features are made
// of: every loop (with its extent, kind and place in the nest), every memory access (with
// its flat index, lanes and how often it executes) and whole-kernel totals (flops, bytes,
// vector operations). Nothing runs: execution counts are products of loop extents, and a
// statement under an `if` counts as if the condition held.
//
// loop_nest.h turns this into per-loop-level statistics; ir_features.h flattens those.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/lowered_func.h"

namespace kiln::cost_model {

struct BufferInfo {
  std::string name;
  ir::DataType dtype;  // element type
  ir::MemScope scope = ir::MemScope::Global;
  bool is_arg = false;   // a kernel argument (else introduced by an Allocate)
  bool written = false;  // some Store writes it
};

struct LoopRecord {
  const ir::VarNode* var = nullptr;
  int64_t min = 0;
  // The constant extent, or the largest one the enclosing loops' bounds allow.
  int64_t extent = 1;
  ir::ForKind kind = ir::ForKind::Serial;
  int parent = -1;  // index into LoopTree::loops; -1 for a loop at the top of the kernel
  std::vector<int> children;
  // How many times the whole loop runs: the product of the enclosing extents.
  double outer_trips = 1;
  // Store statements in its body outside nested loops (unrolled copies show here).
  int64_t body_stores = 0;
  // Executed flops plus memory accesses in the loop, nested loops included.
  double work = 0;
};

struct AccessSite {
  int buffer = 0;  // index into LoopTree::buffers
  int loop = -1;   // innermost enclosing loop (index into LoopTree::loops), -1: none
  ir::Expr index;  // the flat index with let-bound variables substituted
  int lanes = 1;   // elements one execution moves
  bool is_store = false;
  double executions = 0;  // over the whole kernel
};

struct KernelTotals {
  // Float add, sub, mul (1 per lane) and fma (2 per lane), executed.
  double flops = 0;
  // Bytes moved by loads and stores, local buffers included.
  double bytes_loaded = 0;
  double bytes_stored = 0;
  double arithmetic_intensity = 0;  // flops / (bytes loaded + stored)
  // Executed operations on vectors: arithmetic, casts, selects, calls, loads and stores.
  double vector_ops = 0;
  double branches = 0;  // executed IfThenElse statements
  // Iterations the thread pool can spread (nested parallel loops multiply).
  double parallel_extent = 1;
  // The widest float arithmetic in lanes (or the widest access when there is none).
  int vector_width = 1;
  // Bytes of every Allocate (a register tile or a scratch buffer).
  double local_bytes = 0;
};

struct LoopTree {
  // The kernel's arguments in call order, then allocated buffers as they appear.
  std::vector<BufferInfo> buffers;
  std::vector<LoopRecord> loops;  // pre-order: a parent comes before its children
  std::vector<AccessSite> sites;
  KernelTotals totals;
};

// UserError when an access has more than one index: features need lowered (flattened) IR.
LoopTree build_loop_tree(const ir::LoweredFunc& f);

}  // namespace kiln::cost_model
