#include "compiler/graph/passes/infer_shapes.h"

#include "compiler/graph/bind.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/ops/op.h"

namespace kiln::graph {

namespace {

// Infers one operator application: `node` is what is applied, `described` what errors name.
std::vector<TensorType> infer_op(const Graph& graph, const Node& described, const Node& node,
                                 std::vector<std::optional<TensorType>> types,
                                 std::vector<const HostTensor*> values) {
  const OpDef* def = find_op(node.op_type);
  user_check(def != nullptr) << graph.describe(described) << ": operator '" << node.op_type
                             << "' is not supported by kiln";
  try {
    return def->infer(InferContext(node, std::move(types), std::move(values)));
  } catch (const UserError& e) {
    throw UserError(graph.describe(described) + ": " + e.what());
  }
}

}  // namespace

void infer_shapes(Graph& graph) {
  check_inputs_bound(graph);
  // Values known while inferring: initializers, and outputs of nodes whose inputs are known.
  std::map<std::string, HostTensor> computed;
  auto value_of = [&](const std::string& name) -> const HostTensor* {
    if (auto it = graph.initializers.find(name); it != graph.initializers.end()) return &it->second;
    if (auto it = computed.find(name); it != computed.end()) return &it->second;
    return nullptr;
  };
  auto type_of = [&](const std::string& name) -> std::optional<TensorType> {
    if (name.empty()) return std::nullopt;
    std::optional<ValueType> t = graph.type_of(name);
    internal_check(t && t->is_concrete())
        << "infer_shapes: value '" << name << "' has no concrete type before it is read";
    return TensorType{t->dtype, t->dims()};
  };

  for (const Node& node : graph.nodes) {
    std::vector<std::optional<TensorType>> types;
    std::vector<const HostTensor*> values;
    bool all_known = !node.inputs.empty();
    for (const std::string& in : node.inputs) {
      types.push_back(type_of(in));
      values.push_back(in.empty() ? nullptr : value_of(in));
      if (!in.empty() && !values.back()) all_known = false;
    }
    std::vector<TensorType> out = infer_op(graph, node, node, types, values);
    internal_check(out.size() >= node.outputs.size())
        << graph.describe(node) << ": inference gave " << out.size() << " types for "
        << node.outputs.size() << " outputs";
    // A fused epilogue keeps the first output's type; infer it to check its operands.
    for (const Node& e : node.epilogue) {
      std::vector<std::optional<TensorType>> etypes = {out[0]};
      std::vector<const HostTensor*> evalues = {nullptr};
      for (const std::string& in : e.inputs) {
        etypes.push_back(type_of(in));
        evalues.push_back(in.empty() ? nullptr : value_of(in));
      }
      const TensorType t = infer_op(graph, node, e, etypes, evalues)[0];
      user_check(t.dtype == out[0].dtype && t.shape == out[0].shape)
          << graph.describe(node) << ": fused " << e.op_type << " would change the output type";
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      // Every shape must have a countable number of elements (operators rely on it).
      try {
        shape_numel(out[i].shape);
      } catch (const UserError& e) {
        throw UserError(graph.describe(node) + ": output '" + node.outputs[i] + "': " + e.what());
      }
      graph.types[node.outputs[i]] = ValueType::of(out[i].dtype, out[i].shape);
    }

    // Learn the values that shapes or constants decide, for the nodes downstream.
    const OpDef* def = find_op(node.op_type);
    std::vector<HostTensor> known;
    if (def->fold_from_types && node.epilogue.empty())
      known = def->fold_from_types(InferContext(node, types, values));
    else if (all_known)
      known = evaluate_node(graph, node, value_of);
    for (size_t i = 0; i < known.size() && i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) computed[node.outputs[i]] = std::move(known[i]);
  }
  for (const std::string& out : graph.outputs)
    internal_check(graph.type_of(out).has_value()) << "graph output '" << out << "' has no type";
}

}  // namespace kiln::graph
