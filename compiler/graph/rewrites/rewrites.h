// The graph rewrites that put an imported network into the forms the operator library has
// kernels for, before batch-norm folding and epilogue fusion (network/prepare_graph.cpp): one
// table, as compiler/lower/lower.cpp has for the loop IR. Each row names its rewrite, what it
// does and the invariant it leaves; run_rewrites runs the rows in order, the graph verifier
// after each (always under the tests, KILN_VERIFY_GRAPH=1 otherwise), and KILN_DUMP_GRAPH=1
// prints the graph after each row by name. Each rewrite is one file of this folder; they are
// pure graph to graph functions that know nothing of kernels but the limits in RewriteOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/rewrites/quantized_operators.h"

namespace kiln::graph {

// The limits of the kernels that the network compiler maps the rewritten graph to: passed in,
// so that the rewrites depend on nothing above the graph IR.
struct RewriteOptions {
  int64_t max_concat_inputs = 64;       // a longer Concat is emitted as a tree of them
  int64_t attention_max_keys = 16384;   // attention fuses only score rows this long or shorter
  bool int8_conv_depthwise = false;     // QLinearConv for groups 1, and depthwise when set
  KeepFloat int8_conv_keep_float;       // and not where this gives a reason (empty: anywhere)
  bool verify = false;                  // the verifier after every row (KILN_VERIFY_GRAPH=1 too)
};

struct GraphRewrite {
  const char* name;         // "fuse_layer_norm"
  const char* purpose;      // what it rewrites, in a line
  const char* establishes;  // what holds after it, for the rows below
  // Rewrites in place; returns how many sites it rewrote (0: the graph is unchanged).
  int (*run)(Graph& graph, const RewriteOptions& options);
};

// The rows, in the order they run.
const std::vector<GraphRewrite>& graph_rewrites();
// The row named `name`; InternalError when there is none (the tests run rows one by one).
const GraphRewrite& graph_rewrite(const std::string& name);

struct RewriteCount {
  std::string name;
  int sites = 0;
};
// Runs every row in order; the sites each rewrote, in the same order.
std::vector<RewriteCount> run_rewrites(Graph& graph, const RewriteOptions& options);
// "2 fuse_layer_norm, 1 fuse_gelu" (the rows that rewrote something).
std::string rewrite_summary(const std::vector<RewriteCount>& counts);

}  // namespace kiln::graph
