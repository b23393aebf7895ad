#include "compiler/network/node_emitter.h"

#include "schedules/data_movement.h"

namespace kiln::network {

using graph::HostTensor;

std::string NodeEmitter::fresh(const std::string& what) {
  const std::string base =
      site_.outputs.empty() || site_.outputs[0].empty() ? site_.op_type : site_.outputs[0];
  std::string name = g_.unique_name(base + "/" + what + std::to_string(count_++));
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
  const std::string base = site_.outputs.empty() ? site_.op_type : site_.outputs[0];
  return g_.add_constant(base + "/const" + std::to_string(count_++), std::move(value));
}

std::string NodeEmitter::ints(const std::vector<int64_t>& values) {
  return constant(HostTensor::i64_vector(values));
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
  const size_t most = static_cast<size_t>(schedules::kMaxConcatInputs);
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

}  // namespace kiln::network
