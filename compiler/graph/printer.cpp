#include "compiler/graph/printer.h"

#include <sstream>

namespace kiln::graph {

namespace {

// Small constants print their values: folded shapes are what a reader wants to see.
constexpr int64_t kPrintedElements = 8;

template <typename T>
std::string list_str(const std::vector<T>& v) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << ']';
  return os.str();
}

std::string values_str(const HostTensor& t) {
  if (is_float_dtype(t.dtype())) return list_str(t.to_f64());
  return list_str(t.to_i64());
}

std::string tensor_str(const HostTensor& t) {
  std::string s = t.dtype().str() + shape_str(t.shape());
  if (t.numel() <= kPrintedElements) s += " = " + values_str(t);
  return s;
}

void print_call(std::ostream& os, const Node& node, bool first_implicit) {
  os << node.op_type << '(';
  bool first = true;
  if (first_implicit) {
    os << '_';
    first = false;
  }
  for (const std::string& in : node.inputs) {
    os << (first ? "" : ", ") << (in.empty() ? "<none>" : in);
    first = false;
  }
  os << ')';
  if (!node.attrs.empty()) {
    os << " {";
    bool first_attr = true;
    for (const auto& [key, value] : node.attrs) {
      os << (first_attr ? "" : ", ") << key << '=' << attr_str(value);
      first_attr = false;
    }
    os << '}';
  }
}

}  // namespace

std::string attr_str(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        std::ostringstream os;
        if constexpr (std::is_same_v<T, std::string>) {
          os << '\'' << v << '\'';
        } else if constexpr (std::is_same_v<T, HostTensor>) {
          os << "tensor " << tensor_str(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          os << '[';
          for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << '\'' << v[i] << '\'';
          os << ']';
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, float>) {
          os << v;
        } else {
          os << list_str(v);
        }
        return os.str();
      },
      value);
}

std::ostream& operator<<(std::ostream& os, const Graph& graph) {
  os << "graph \"" << graph.name << "\" (opset " << graph.opset << ")";
  if (!graph.source.empty()) os << " from " << graph.source;
  os << '\n';
  auto typed = [&](const std::string& name) {
    std::optional<ValueType> t = graph.type_of(name);
    return t ? type_str(*t) : std::string("?");
  };
  for (const std::string& in : graph.inputs) os << "  input  " << in << ": " << typed(in) << '\n';
  for (const auto& [name, t] : graph.initializers)
    os << "  init   " << name << ": " << tensor_str(t) << '\n';
  for (const Node& node : graph.nodes) {
    os << "  ";
    for (size_t i = 0; i < node.outputs.size(); ++i)
      os << (i ? ", " : "") << (node.outputs[i].empty() ? "<none>" : '%' + node.outputs[i]);
    os << " = ";
    print_call(os, node, false);
    for (const Node& e : node.epilogue) {
      os << " -> ";
      print_call(os, e, true);
    }
    os << " :";
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) os << (i ? ", " : " ") << typed(node.outputs[i]);
    if (!node.name.empty()) os << "  # " << node.name;
    os << '\n';
  }
  for (const std::string& out : graph.outputs) os << "  output " << out << '\n';
  return os;
}

std::string print_graph(const Graph& graph) {
  std::ostringstream os;
  os << graph;
  return os.str();
}

}  // namespace kiln::graph
