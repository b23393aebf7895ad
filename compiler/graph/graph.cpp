#include "compiler/graph/graph.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace kiln::graph {

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ',';
    if (shape[i].known())
      os << shape[i].value;
    else
      os << (shape[i].symbol.empty() ? "?" : shape[i].symbol);
  }
  os << ']';
  return os.str();
}

Shape to_shape(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return s;
}

bool ValueType::is_concrete() const {
  if (!shape) return false;
  for (const Dim& d : *shape)
    if (!d.known()) return false;
  return true;
}

std::vector<int64_t> ValueType::dims() const {
  internal_check(is_concrete()) << "dims() of a non-concrete type " << type_str(*this);
  std::vector<int64_t> out;
  for (const Dim& d : *shape) out.push_back(d.value);
  return out;
}

std::string type_str(const ValueType& type) {
  return type.dtype.str() + (type.shape ? shape_str(*type.shape) : "[...]");
}

const char* attr_kind_name(const AttrValue& v) {
  static const char* kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return kNames[v.index()];
}

namespace {

template <typename T>
const T* typed_attr(const Node& node, const std::string& key, const char* wanted) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  user_check(v != nullptr) << "attribute '" << key << "' of " << node.op_type << " must be "
                           << wanted << ", but it is " << attr_kind_name(it->second);
  return v;
}

}  // namespace

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const auto* v = typed_attr<int64_t>(*this, key, "an int");
  return v ? *v : fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  // Exporters sometimes write an integral float attribute as an int: accept it.
  auto it = attrs.find(key);
  if (it != attrs.end())
    if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  const auto* v = typed_attr<float>(*this, key, "a float");
  return v ? *v : fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const auto* v = typed_attr<std::string>(*this, key, "a string");
  return v ? *v : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  const auto* v = typed_attr<std::vector<int64_t>>(*this, key, "a list of ints");
  return v ? *v : fallback;
}

std::vector<float> Node::attr_floats(const std::string& key,
                                     const std::vector<float>& fallback) const {
  const auto* v = typed_attr<std::vector<float>>(*this, key, "a list of floats");
  return v ? *v : fallback;
}

const HostTensor* Node::attr_tensor(const std::string& key) const {
  return typed_attr<HostTensor>(*this, key, "a tensor");
}

std::optional<ValueType> Graph::type_of(const std::string& value) const {
  if (auto it = types.find(value); it != types.end()) return it->second;
  if (auto it = initializers.find(value); it != initializers.end())
    return ValueType::of(it->second.dtype(), it->second.shape());
  return std::nullopt;
}

std::string Graph::unique_name(const std::string& base) const {
  std::unordered_set<std::string> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  for (const auto& [name, _] : initializers) used.insert(name);
  for (const auto& [name, _] : types) used.insert(name);
  for (const Node& n : nodes) used.insert(n.outputs.begin(), n.outputs.end());
  if (!used.count(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = base + "_" + std::to_string(k);
    if (!used.count(candidate)) return candidate;
  }
}

std::string Graph::add_constant(const std::string& base, HostTensor value) {
  std::string name = unique_name(base);
  initializers.emplace(name, std::move(value));
  return name;
}

std::string Graph::describe(const Node& node) const {
  std::ostringstream os;
  if (!source.empty()) os << source << ": ";
  os << "node";
  if (node.source_index >= 0) os << ' ' << node.source_index;
  if (!node.name.empty()) os << " '" << node.name << "'";
  os << " (" << node.op_type << ")";
  return os.str();
}

void sort_topologically(Graph& graph) {
  // Which node defines each value; graph inputs and initializers are defined up front.
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) {
      if (out.empty()) continue;
      const bool is_input =
          std::find(graph.inputs.begin(), graph.inputs.end(), out) != graph.inputs.end();
      user_check(!graph.is_constant(out) && !producer.count(out) && !is_input)
          << graph.describe(graph.nodes[i]) << ": output '" << out
          << "' is already defined by another node, a graph input or an initializer (values "
             "must be defined once)";
      producer[out] = i;
    }
  }
  std::unordered_set<std::string> available(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, _] : graph.initializers) available.insert(name);

  auto all_operands = [](const Node& n) {
    std::vector<std::string> names = n.inputs;
    for (const Node& e : n.epilogue) names.insert(names.end(), e.inputs.begin(), e.inputs.end());
    return names;
  };
  // Kahn's algorithm, stable: among ready nodes the earliest in the file goes first.
  std::vector<int> missing(graph.nodes.size(), 0);
  std::unordered_map<std::string, std::vector<size_t>> waiting;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    std::set<std::string> pending;
    for (const std::string& in : all_operands(graph.nodes[i])) {
      if (in.empty() || available.count(in)) continue;
      user_check(producer.count(in))
          << graph.describe(graph.nodes[i]) << ": input '" << in
          << "' is not a graph input, an initializer or the output of any node (a missing "
             "initializer?)";
      pending.insert(in);
    }
    missing[i] = static_cast<int>(pending.size());
    for (const std::string& in : pending) waiting[in].push_back(i);
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (const std::string& out : graph.nodes[i].outputs) {
      auto it = waiting.find(out);
      if (out.empty() || it == waiting.end()) continue;
      for (size_t j : it->second)
        if (--missing[j] == 0) ready.insert(j);
    }
  }
  if (order.size() != graph.nodes.size()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      user_check(missing[i] == 0) << graph.describe(graph.nodes[i])
                                  << ": the node depends on its own output (the graph has a cycle)";
  }
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(sorted);
}

}  // namespace kiln::graph
