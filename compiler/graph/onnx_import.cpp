#include "compiler/graph/onnx_import.h"

#include <climits>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/graph/normalize.h"
#include "compiler/graph/onnx_tensor.h"
#include "compiler/graph/ops/op.h"
#include "compiler/graph/ops/quantized_contrib.h"
#include "compiler/graph/verify.h"

namespace kiln::graph {

namespace {

std::string contrib_op_list() {
  std::string s;
  for (const std::string& op : quantized_contrib_ops()) s += (s.empty() ? "" : ", ") + op;
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_check(in.good()) << path << ": cannot open the file";
  std::ostringstream os;
  os << in.rdbuf();
  user_check(!in.bad()) << path << ": cannot read the file";
  return os.str();
}

// Which value an AttributeProto holds: its `type`, or for old exporters that leave it unset,
// whichever field is filled.
onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  if (a.has_g() || a.graphs_size()) return onnx::AttributeProto::GRAPH;
  return onnx::AttributeProto::UNDEFINED;
}

AttrValue convert_attribute(const onnx::AttributeProto& a) {
  user_check(a.ref_attr_name().empty()) << "attribute '" << a.name()
                                        << "' refers to a function attribute, which kiln does not "
                                           "support";
  switch (attribute_type(a)) {
    case onnx::AttributeProto::FLOAT:
      return a.f();
    case onnx::AttributeProto::INT:
      return static_cast<int64_t>(a.i());
    case onnx::AttributeProto::STRING:
      return a.s();
    case onnx::AttributeProto::TENSOR:
      return tensor_from_onnx(a.t(), "attribute '" + a.name() + "'");
    case onnx::AttributeProto::FLOATS:
      return std::vector<float>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::INTS:
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::GRAPHS:
      user_error() << "attribute '" << a.name()
                   << "' is a subgraph; control flow (If, Loop, Scan) is not supported";
      break;
    default:
      user_error() << "attribute '" << a.name() << "' has a kind kiln does not support ("
                   << onnx::AttributeProto::AttributeType_Name(a.type()) << ")";
  }
  return int64_t{0};
}

// A Constant node's value as a tensor (value, value_float(s), value_int(s)).
HostTensor constant_value(const Node& node) {
  user_check(node.attrs.size() == 1)
      << "Constant needs exactly one value attribute, got " << node.attrs.size();
  const auto& [key, value] = *node.attrs.begin();
  if (key == "value") {
    const HostTensor* t = node.attr_tensor("value");
    return *t;
  }
  if (key == "value_float")
    return HostTensor::from_f64(DataType::f32(), {}, {node.attr_float(key, 0)});
  if (key == "value_int") return HostTensor::from_i64(DataType::i64(), {}, {node.attr_int(key, 0)});
  if (key == "value_floats") {
    const std::vector<float> v = node.attr_floats(key);
    return HostTensor::from_f64(DataType::f32(), {static_cast<int64_t>(v.size())},
                                std::vector<double>(v.begin(), v.end()));
  }
  if (key == "value_ints") return HostTensor::i64_vector(node.attr_ints(key));
  user_error() << "Constant attribute '" << key << "' is not supported (kiln reads value, "
               << "value_float, value_floats, value_int, value_ints)";
  return {};
}

ValueType value_type(const onnx::ValueInfoProto& info, const std::string& what) {
  user_check(info.type().has_tensor_type())
      << what << " is not a tensor (sequences, maps and optionals are not supported)";
  const onnx::TypeProto::Tensor& tensor = info.type().tensor_type();
  ValueType type;
  type.dtype = dtype_from_onnx(tensor.elem_type(), what);
  if (!tensor.has_shape()) return type;
  type.shape.emplace();
  for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      user_check(d.dim_value() >= 0) << what << " has a negative dimension " << d.dim_value();
      type.shape->push_back(Dim::of(d.dim_value()));
    } else {
      type.shape->push_back(Dim::symbolic(d.dim_param()));
    }
  }
  return type;
}

// The node's description before it is in the graph (for errors while reading it).
std::string describe_proto(const std::string& source, int index, const onnx::NodeProto& n) {
  std::ostringstream os;
  os << source << ": node " << index;
  if (!n.name().empty()) os << " '" << n.name() << "'";
  os << " (" << (n.op_type().empty() ? "?" : n.op_type()) << ")";
  return os.str();
}

// Checks the node against its operator's definition: arity and attribute names.
void check_against_definition(const Node& node, const OpDef& def) {
  const int inputs = static_cast<int>(node.inputs.size());
  user_check(inputs >= def.min_inputs && (def.max_inputs < 0 || inputs <= def.max_inputs))
      << "has " << inputs << " inputs; " << def.type << " takes " << def.min_inputs
      << (def.max_inputs < 0 ? " or more" : " to " + std::to_string(def.max_inputs));
  for (int i = 0; i < def.min_inputs; ++i)
    user_check(node.has_input(i)) << "leaves out input " << i << ", which " << def.type
                                  << " requires";
  const int outputs = static_cast<int>(node.outputs.size());
  user_check(outputs >= def.min_outputs && (def.max_outputs < 0 || outputs <= def.max_outputs))
      << "has " << outputs << " outputs; " << def.type << " gives " << def.min_outputs
      << (def.max_outputs < 0 ? " or more" : " to " + std::to_string(def.max_outputs));
  for (const auto& [key, value] : node.attrs) {
    bool known = false;
    for (const std::string& a : def.attributes) known = known || a == key;
    if (known) continue;
    std::string valid;
    for (const std::string& a : def.attributes) valid += (valid.empty() ? "" : ", ") + a;
    user_error() << "attribute '" << key << "' is not supported by kiln's " << def.type
                 << " (supported: " << (valid.empty() ? "none" : valid) << ")";
  }
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, const std::string& source)
      : model_(model), source_(source) {}

  Graph run() {
    graph_.source = source_;
    graph_.opset = default_opset();
    const onnx::GraphProto& g = model_.graph();
    graph_.name = g.name();
    user_check(g.sparse_initializer_size() == 0)
        << source_ << ": sparse initializers are not supported";
    for (const onnx::TensorProto& t : g.initializer()) {
      const std::string what = source_ + ": initializer '" + t.name() + "'";
      user_check(!t.name().empty()) << source_ << ": an initializer has no name";
      user_check(!graph_.initializers.count(t.name())) << what << " is defined twice";
      graph_.initializers.emplace(t.name(), tensor_from_onnx(t, what));
    }
    std::set<std::string> seen_inputs;
    for (const onnx::ValueInfoProto& in : g.input()) {
      // Older exporters list initializers among the inputs too: those are weights.
      if (graph_.initializers.count(in.name())) continue;
      user_check(!in.name().empty()) << source_ << ": a graph input has no name";
      user_check(seen_inputs.insert(in.name()).second)
          << source_ << ": graph input '" << in.name() << "' is listed twice";
      graph_.inputs.push_back(in.name());
      graph_.types[in.name()] = value_type(in, source_ + ": graph input '" + in.name() + "'");
    }
    for (int i = 0; i < g.node_size(); ++i) import_node(i, g.node(i));
    for (const onnx::ValueInfoProto& out : g.output()) {
      user_check(!out.name().empty()) << source_ << ": a graph output has no name";
      graph_.outputs.push_back(out.name());
    }
    sort_topologically(graph_);
    check_outputs_defined();
    verify_graph(graph_, "import");
    return std::move(graph_);
  }

 private:
  int64_t default_opset() const {
    int64_t opset = -1;
    for (const onnx::OperatorSetIdProto& id : model_.opset_import())
      if (id.domain().empty() || id.domain() == "ai.onnx") opset = id.version();
    user_check(opset >= 0) << source_ << ": the model imports no opset of the default ONNX domain";
    user_check(opset >= kMinOpset && opset <= kMaxOpset)
        << source_ << ": opset " << opset << " is not supported (kiln reads opsets " << kMinOpset
        << " to " << kMaxOpset << ")";
    return opset;
  }

  void import_node(int index, const onnx::NodeProto& proto) {
    try {
      Node node;
      node.name = proto.name();
      node.op_type = proto.op_type();
      node.source_index = index;
      node.inputs.assign(proto.input().begin(), proto.input().end());
      node.outputs.assign(proto.output().begin(), proto.output().end());
      // Trailing omitted outputs are the same as absent ones.
      while (!node.outputs.empty() && node.outputs.back().empty()) node.outputs.pop_back();
      user_check(proto.domain().empty() || proto.domain() == "ai.onnx" ||
                 (proto.domain() == "com.microsoft" && is_quantized_contrib_op(proto.op_type())))
          << "operator domain '" << proto.domain() << "' is not supported for " << proto.op_type()
          << " (kiln reads the default ONNX domain, and ONNX Runtime's "
          << "com.microsoft operators of its quantizer: " << contrib_op_list() << ")";
      for (const onnx::AttributeProto& a : proto.attribute()) {
        user_check(!a.name().empty()) << "an attribute has no name";
        user_check(!node.attrs.count(a.name())) << "attribute '" << a.name() << "' is given twice";
        node.attrs[a.name()] = convert_attribute(a);
      }
      if (node.op_type == "Constant") {
        user_check(node.outputs.size() == 1 && !node.outputs[0].empty())
            << "Constant needs one output";
        const std::string& out = node.outputs[0];
        user_check(!graph_.initializers.count(out) && !graph_.types.count(out))
            << "output '" << out << "' is already defined";
        graph_.initializers.emplace(node.outputs[0], constant_value(node));
        return;
      }
      // Cast's target type: ONNX's numeric code becomes kiln's type name.
      // (Before opset 6 it was a name such as "FLOAT".)
      if (node.op_type == "Cast" && node.has_attr("to")) {
        int32_t code = 0;
        if (const auto* name = std::get_if<std::string>(&node.attrs["to"])) {
          onnx::TensorProto::DataType parsed = onnx::TensorProto::UNDEFINED;
          user_check(onnx::TensorProto::DataType_Parse(*name, &parsed))
              << "attribute 'to' names no element type: '" << *name << "'";
          code = parsed;
        } else {
          code = static_cast<int32_t>(node.attr_int("to", 0));
        }
        node.attrs["to"] = dtype_from_onnx(code, "attribute 'to'").str();
      }
      normalize_node(node, graph_.opset, graph_);
      const OpDef* def = find_op(node.op_type);
      user_check(def != nullptr) << "operator '" << node.op_type << "' is not supported by kiln";
      check_against_definition(node, *def);
      graph_.nodes.push_back(std::move(node));
    } catch (const UserError& e) {
      throw UserError(describe_proto(source_, index, proto) + ": " + e.what());
    }
  }

  void check_outputs_defined() const {
    std::set<std::string> defined(graph_.inputs.begin(), graph_.inputs.end());
    for (const auto& [name, _] : graph_.initializers) defined.insert(name);
    for (const Node& n : graph_.nodes) defined.insert(n.outputs.begin(), n.outputs.end());
    for (const std::string& out : graph_.outputs)
      user_check(defined.count(out)) << source_ << ": graph output '" << out
                                     << "' is not defined by any node, input or initializer";
  }

  const onnx::ModelProto& model_;
  const std::string& source_;
  Graph graph_;
};

}  // namespace

Graph import_onnx_bytes(std::string_view bytes, const std::string& source) {
  user_check(bytes.size() <= static_cast<size_t>(INT_MAX))
      << source
      << ": the model is larger than 2 GiB, protobuf's limit; keep the weights in "
         "the file under 2 GiB";
  onnx::ModelProto model;
  user_check(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      << source
      << ": not an ONNX model (the file does not parse as an ONNX ModelProto "
         "protobuf; is it truncated or another format?)";
  user_check(model.has_graph()) << source << ": not an ONNX model (it has no graph)";
  return Importer(model, source).run();
}

Graph import_onnx_file(const std::string& path) {
  return import_onnx_bytes(read_file(path), path);
}

HostTensor import_onnx_tensor_file(const std::string& path) {
  const std::string bytes = read_file(path);
  onnx::TensorProto proto;
  user_check(bytes.size() <= static_cast<size_t>(INT_MAX) &&
             proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      << path << ": not a serialized ONNX TensorProto";
  return tensor_from_onnx(proto, path);
}

}  // namespace kiln::graph
