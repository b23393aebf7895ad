// Joint layout choice over a network (AutoTVM's graph tuner): each layout-sensitive kernel
// call has a few candidate states (a tuned config per channel block: the layouts it reads
// and writes, and its measured time), and every activation whose producer writes one layout
// while a consumer reads another pays a conversion. The solver picks one state per call to
// minimise the sum of kernel times and conversion times.
//
// How it is solved (exact on chains and trees, an approximation on joins):
//   1. Dynamic programming over a tree: each call's parent is the producer of its first
//      activation input (the data input of a conv). Bottom-up, a call's table holds, per
//      state, its own time plus the best its subtree can do given that state (conversions on
//      the tree edges included); top-down, each child takes its best state given its
//      parent's. Fan-out (one value read by several calls) is exact: children add up.
//   2. The edges the tree leaves out (a fused residual, the second input of an add, every
//      input of a concat but the first) are costed by local search from step 1's answer:
//      a call, or a producer and a reader together, moves to the states that lower the
//      network's total (every edge counted, and a conversion a value needs once for several
//      readers counted once, as the compiler builds it), until no such move helps. Never
//      worse than step 1's answer; it can miss a joint move of three or more calls around a
//      join (measured on random residual chains: within 15% of the brute-force optimum).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "network/kernel_layout.h"

namespace kiln::network {

// One candidate of a call: the layout of each activation input (in LayoutCall::inputs'
// order), of its output, and its time.
struct LayoutState {
  std::vector<Layout> inputs;
  Layout output = 0;
  double cost_s = 0;
};

struct LayoutCall {
  std::string name;
  std::vector<int> inputs;  // the activation values read (LayoutProblem::values indices)
  int output = -1;          // the value written
  std::vector<LayoutState> states;  // at least one
};

struct LayoutValue {
  std::string name;
  std::vector<int64_t> dims;   // logical NCHW (or other) shape
  bool graph_output = false;   // must end in the logical layout (0)
};

struct LayoutProblem {
  std::vector<LayoutValue> values;  // a value no call writes is a graph input, in layout 0
  std::vector<LayoutCall> calls;    // in execution order (producers first)
  // The time of converting `value` from one layout to another.
  std::function<double(int value, Layout from, Layout to)> conversion_s;
};

struct LayoutSolution {
  std::vector<size_t> states;  // per call
  double cost_s = 0;           // kernels + conversions
  double conversion_s = 0;
  int conversions = 0;
};

// Costs of one assignment of states (every edge counted, a value's conversion to one layout
// once however many calls read it there).
LayoutSolution evaluate_layouts(const LayoutProblem& problem, const std::vector<size_t>& states);

// The DP then the refinement described above.
LayoutSolution solve_layouts(const LayoutProblem& problem);

}  // namespace kiln::network
