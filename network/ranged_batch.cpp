#include "network/ranged_batch.h"

#include "compiler/base/error.h"
#include "compiler/graph/batch_separable.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"

namespace kiln::network {

namespace {

// The symbol's places in the inputs' declared shapes; a UserError when it is anywhere but
// axis 0, where the runtime cannot slice the samples apart.
void check_symbol_is_a_batch(const graph::Graph& g, const graph::DimRange& range) {
  bool found = false;
  for (const std::string& in : g.inputs) {
    const graph::ValueType& t = g.types.at(in);
    if (!t.shape) continue;
    for (size_t axis = 0; axis < t.shape->size(); ++axis) {
      if ((*t.shape)[axis].known() || (*t.shape)[axis].symbol != range.symbol) continue;
      user_check(axis == 0)
          << "--range " << range.symbol << ": '" << range.symbol << "' is axis " << axis
          << " of input '" << in << "' " << graph::shape_str(*t.shape)
          << "; kiln compiles a range only for a batch, axis 0 of the inputs (other ranged "
             "dimensions are not supported yet)";
      found = true;
    }
  }
  user_check(found) << "--range " << range.symbol << ": no input of " << g.source
                    << " has a dimension named '" << range.symbol << "'";
}

graph::Graph bound_at(const std::string& model_path, graph::ShapeBindings bindings,
                      const std::string& symbol, int64_t batch) {
  graph::Graph g = graph::import_onnx_file(model_path);
  bindings[symbol] = {batch};
  graph::bind_input_shapes(g, bindings);
  graph::run_graph_passes(g);
  return g;
}

}  // namespace

BatchRange plan_batch_range(const std::string& model_path, const graph::ShapeBindings& bindings,
                            const graph::DimRange& range) {
  user_check(range.max <= (int64_t{1} << 30))
      << "--range " << range.symbol << ": at most 2^30 samples";
  user_check(bindings.count(range.symbol) == 0)
      << "--range " << range.symbol << " and --input-shape " << range.symbol
      << " both give it a size: keep one";
  check_symbol_is_a_batch(graph::import_onnx_file(model_path), range);
  // Two batches, neither 1 (no pass may treat them as a broadcast), compared node by node.
  const graph::Graph at2 = bound_at(model_path, bindings, range.symbol, 2);
  const graph::Graph at3 = bound_at(model_path, bindings, range.symbol, 3);
  BatchRange r{range.symbol, range.min, range.max, {}};
  r.batched_inputs = graph::check_batch_separable(at2, at3, range.symbol);
  return r;
}

}  // namespace kiln::network
