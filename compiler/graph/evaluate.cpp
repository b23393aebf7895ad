#include "compiler/graph/evaluate.h"

#include <unordered_map>

#include "compiler/graph/ops/op.h"

namespace kiln::graph {

namespace {

// Runs one operator; errors get the node's description.
std::vector<HostTensor> run_op(const Graph& graph, const Node& described, const Node& node,
                               std::vector<const HostTensor*> inputs) {
  const OpDef* def = find_op(node.op_type);
  user_check(def != nullptr) << graph.describe(described) << ": operator '" << node.op_type
                             << "' is not supported by kiln";
  try {
    EvalContext ctx(node, std::move(inputs));
    // Refuse oversized results before computing them (a hostile model could broadcast two
    // small constants to terabytes).
    const std::vector<TensorType> types = def->infer(ctx.infer_context());
    bool all_empty = true;
    for (const TensorType& t : types) {
      check_allocatable(t.dtype, t.shape);
      all_empty = all_empty && shape_numel(t.shape) == 0;
    }
    // Empty results need no computation (and an empty tensor's other dimensions may be huge,
    // which loops over them would not survive).
    if (all_empty) {
      std::vector<HostTensor> out;
      for (const TensorType& t : types) out.emplace_back(t.dtype, t.shape);
      return out;
    }
    return def->eval(ctx);
  } catch (const UserError& e) {
    throw UserError(graph.describe(described) + ": " + e.what());
  }
}

}  // namespace

std::vector<HostTensor> evaluate_node(const Graph& graph, const Node& node,
                                      const ValueLookup& value_of) {
  auto resolve = [&](const std::vector<std::string>& names) {
    std::vector<const HostTensor*> v;
    for (const std::string& n : names) {
      if (n.empty()) {
        v.push_back(nullptr);
        continue;
      }
      const HostTensor* t = value_of(n);
      internal_check(t != nullptr) << graph.describe(node) << ": no value for input '" << n << "'";
      v.push_back(t);
    }
    return v;
  };
  std::vector<HostTensor> out = run_op(graph, node, node, resolve(node.inputs));
  internal_check(out.size() >= node.outputs.size())
      << graph.describe(node) << ": the evaluator gave " << out.size() << " outputs for "
      << node.outputs.size();
  out.resize(node.outputs.size());
  for (const Node& e : node.epilogue) {
    std::vector<const HostTensor*> ins = resolve(e.inputs);
    ins.insert(ins.begin(), &out[0]);
    HostTensor next = std::move(run_op(graph, node, e, ins)[0]);
    out[0] = std::move(next);
  }
  return out;
}

std::map<std::string, HostTensor> evaluate(const Graph& graph,
                                           const std::map<std::string, HostTensor>& inputs) {
  std::unordered_map<std::string, HostTensor> env;
  for (const std::string& name : graph.inputs) {
    auto it = inputs.find(name);
    user_check(it != inputs.end())
        << graph.source << ": no value given for graph input '" << name << "'";
    const HostTensor& t = it->second;
    const ValueType& declared = graph.types.at(name);
    user_check(t.dtype() == declared.dtype)
        << "graph input '" << name << "' is " << declared.dtype.str() << ", but the value given is "
        << t.dtype().str();
    if (declared.shape) {
      bool ok = declared.shape->size() == t.shape().size();
      for (size_t i = 0; ok && i < t.shape().size(); ++i)
        ok = !(*declared.shape)[i].known() || (*declared.shape)[i].value == t.shape()[i];
      user_check(ok) << "graph input '" << name << "' has shape " << shape_str(*declared.shape)
                     << ", but the value given has shape " << shape_str(t.shape());
    }
    env[name] = t;
  }
  for (const auto& [name, _] : inputs)
    user_check(env.count(name)) << "'" << name << "' is not an input of the graph";

  // The last node that reads each value, so it can be freed after it.
  std::unordered_map<std::string, size_t> last_use;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) last_use[in] = i;
    for (const Node& e : graph.nodes[i].epilogue)
      for (const std::string& in : e.inputs) last_use[in] = i;
  }
  for (const std::string& out : graph.outputs) last_use[out] = graph.nodes.size();

  auto value_of = [&](const std::string& name) -> const HostTensor* {
    if (auto it = env.find(name); it != env.end()) return &it->second;
    if (auto it = graph.initializers.find(name); it != graph.initializers.end()) return &it->second;
    return nullptr;
  };
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    std::vector<HostTensor> out = evaluate_node(graph, node, value_of);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const std::string& name = node.outputs[k];
      if (name.empty()) continue;
      if (auto it = graph.types.find(name); it != graph.types.end() && it->second.is_concrete()) {
        internal_check(it->second.dtype == out[k].dtype() && it->second.dims() == out[k].shape())
            << graph.describe(node) << ": shape inference says '" << name << "' is "
            << type_str(it->second) << ", but evaluation gave "
            << type_str(ValueType::of(out[k].dtype(), out[k].shape()));
      }
      // A value nothing reads (an unused optional output) is dropped at once.
      if (last_use.count(name)) env[name] = std::move(out[k]);
    }
    auto release = [&](const std::string& in) {
      auto it = last_use.find(in);
      if (!in.empty() && it != last_use.end() && it->second == i) env.erase(in);
    };
    for (const std::string& in : node.inputs) release(in);
    for (const Node& e : node.epilogue)
      for (const std::string& in : e.inputs) release(in);
  }
  std::map<std::string, HostTensor> results;
  for (const std::string& out : graph.outputs) {
    const HostTensor* t = value_of(out);
    internal_check(t != nullptr) << "graph output '" << out << "' was not computed";
    results[out] = *t;
  }
  return results;
}

}  // namespace kiln::graph
