#include "compiler/graph/rewrites/node_emitter.h"


namespace kiln::graph {


std::string NodeEmitter::fresh(const std::string& what) {
  const std::string base = site_.outputs.empty() || site_.outputs[0].empty() ? site_.op_type
                                                                            : site_.outputs[0];
  // Every value of a typed graph is in `types` or `initializers`, so two lookups tell a name is
  // free (Graph::unique_name scans the whole graph: per value of an unrolled LSTM, quadratic).
  std::string name = base + "/" + what + std::to_string(count_++);
  while (g_.types.count(name) || g_.initializers.count(name)) name += "_";
  // Reserved until shape inference gives it its type: later fresh names must not take it.
  g_.types[name] = graph::ValueType{graph::DataType::f32(), std::nullopt};
  return name;
}

std::string NodeEmitter::emit(const std::string& op_type, std::vector<std::string> inputs,
                              std::map<std::string, graph::AttrValue> attrs,
                              const std::string& output) {
  graph::Node n;
  n.name = site_.name + "/" + op_type + std::to_string(count_);
  n.op_type = op_type;
  n.source_index = site_.source_index;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.outputs = {output.empty() ? fresh(op_type) : output};
  out_.push_back(std::move(n));
  return out_.back().outputs[0];
}

std::string NodeEmitter::constant(HostTensor value) {
  std::string name = fresh("const");
  g_.types.erase(name);  // an initializer's type is its data's
  g_.initializers.emplace(name, std::move(value));
  return name;
}

std::string NodeEmitter::ints(const std::vector<int64_t>& values) {
  auto it = ints_.find(values);
  if (it == ints_.end()) it = ints_.emplace(values, constant(HostTensor::i64_vector(values))).first;
  return it->second;
}

std::string NodeEmitter::scalar(double value) {
  return constant(HostTensor::from_f64(graph::DataType::f32(), {}, {value}));
}

std::string NodeEmitter::slice(const std::string& v, int64_t axis, int64_t begin, int64_t end) {
  return emit("Slice", {v, ints({begin}), ints({end}), ints({axis})});
}

std::string NodeEmitter::reshape(const std::string& v, const std::vector<int64_t>& shape,
                                 const std::string& output) {
  return emit("Reshape", {v, ints(shape)}, {}, output);
}

std::string NodeEmitter::transpose(const std::string& v, const std::vector<int64_t>& perm,
                                   const std::string& output) {
  return emit("Transpose", {v}, {{"perm", perm}}, output);
}

std::string NodeEmitter::concat(std::vector<std::string> values, int64_t axis,
                                const std::string& output) {
  const size_t most = static_cast<size_t>(max_concat_inputs_);
  while (values.size() > most) {
    std::vector<std::string> rounds;
    for (size_t i = 0; i < values.size(); i += most) {
      std::vector<std::string> part(values.begin() + i,
                                    values.begin() + std::min(values.size(), i + most));
      rounds.push_back(part.size() == 1 ? part[0] : emit("Concat", part, {{"axis", axis}}));
    }
    values = std::move(rounds);
  }
  return emit("Concat", values, {{"axis", axis}}, output);
}

}  // namespace kiln::graph
