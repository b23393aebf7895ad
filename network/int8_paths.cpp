#include "network/int8_paths.h"

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "compiler/graph/rewrites/graph_match.h"
#include "network/lower_network.h"
#include "network/node_choice.h"
#include "network/prepare_graph.h"
#include "tuner/history_best.h"

namespace kiln::network {
namespace {

// One conv's float path in the graph with every quantized conv on it, by node_key (lowering
// may add to the graph, so no pointers into it are kept).
struct FloatPath {
  std::string dequantize;  // of the conv's input, when there is one
  int dequantize_readers = 1;
  std::vector<std::pair<std::string, bool>> nodes;  // the conv, then up to its QuantizeLinear
                                                    // (true: that QuantizeLinear)
  std::string quantized;                            // the value its int8 kernel would write
};

const graph::Node* node_by_key(const graph::Graph& g, const std::string& key) {
  for (const graph::Node& n : g.nodes)
    if (node_key(n.name, n.outputs) == key) return &n;
  return nullptr;
}

std::optional<FloatPath> float_path(const graph::Graph& g, const std::string& conv_key) {
  const graph::Node* conv = node_by_key(g, conv_key);
  if (conv && conv->op_type != "Conv") {
    // An unnamed QLinearConv is known by its 8-bit output, which its expansion's
    // QuantizeLinear writes: the Conv is behind it.
    conv =
        conv->op_type == "QuantizeLinear" ? graph::producer_node(g, conv->inputs.at(0)) : nullptr;
  }
  if (!conv || conv->op_type != "Conv") return std::nullopt;
  FloatPath path;
  auto key = [](const graph::Node& n) { return node_key(n.name, n.outputs); };
  path.nodes.push_back({key(*conv), false});
  // Up to the QuantizeLinear: a Relu or another epilogue left unfused, at most a few.
  const graph::Node* at = conv;
  while (at->op_type != "QuantizeLinear" && !at->outputs.at(0).empty()) {
    const graph::Node* next = graph::only_reader(g, at->outputs.at(0));
    if (!next || path.nodes.size() > 4) return std::nullopt;
    path.nodes.push_back({key(*next), next->op_type == "QuantizeLinear"});
    at = next;
  }
  path.quantized = at->outputs.at(0);
  if (const graph::Node* dq = graph::producer_op(g, conv->inputs.at(0), "DequantizeLinear")) {
    path.dequantize = key(*dq);
    path.dequantize_readers = std::max<int>(1, graph::readers(g, dq->outputs.at(0)).size());
  }
  return path;
}

}  // namespace

bool Int8PathTimes::keeps_float() const {
  return measured() && float_s * (1 + kFloatPathMargin) < int8_s;
}

std::string Int8PathTimes::reason() const {
  return std::string(kMeasuredSlower) + ": int8 kernel " + format_ms(int8_s) + " ms, float path " +
         format_ms(float_s) + " ms" +
         (edges_s > 0 ? " (" + format_ms(edges_s) + " of it quantize/dequantize)" : "");
}

Int8Paths Int8PathPlan::paths() const {
  Int8Paths p;
  for (const Int8PathTimes& c : convs)
    if (c.measured()) p.measured[c.conv] = c.keeps_float() ? c.reason() : "";
  return p;
}

Int8PathPlan plan_int8_paths(const std::string& model_path, const graph::ShapeBindings& shapes,
                             const Target& target, const PrecisionOptions& precision,
                             const std::vector<tuner::TuningRecord>& records) {
  Int8PathPlan plan;
  PrecisionOptions on_float = precision, on_int8 = precision;
  on_float.int8 = {Int8Paths::Force::Float, {}};
  on_int8.int8 = {Int8Paths::Force::Int8, {}};
  PreparedGraph as_float = prepare_graph(model_path, shapes, target, on_float);
  for (const KeptFloat& k : as_float.int8_kept_float)
    if (k.reason == kForcedFloatPath) plan.convs.push_back({k.node});
  if (plan.convs.empty()) return plan;  // no quantized conv with an int8 kernel
  PreparedGraph as_int8 = prepare_graph(model_path, shapes, target, on_int8);

  // Each conv's nodes on either path, found before lowering.
  std::vector<std::optional<FloatPath>> float_paths;
  std::vector<std::string> int8_nodes;
  for (const Int8PathTimes& c : plan.convs) {
    float_paths.push_back(float_path(as_float.graph, c.conv));
    const graph::Node* kernel =
        float_paths.back() ? graph::producer_node(as_int8.graph, float_paths.back()->quantized)
                           : nullptr;
    int8_nodes.push_back(kernel ? node_key(kernel->name, kernel->outputs) : "");
  }
  const tuner::HistoryBest history(records);
  const NetworkProgram float_program = lower_network(as_float.graph, target, history);
  const NetworkProgram int8_program = lower_network(as_int8.graph, target, history);
  const RecordTimes times(records, target);
  std::set<std::string> listed;
  const ProgramTimes on_float_path(float_program, times, plan.unmeasured, listed);
  const ProgramTimes on_int8_path(int8_program, times, plan.unmeasured, listed);

  for (size_t i = 0; i < plan.convs.size(); ++i) {
    Int8PathTimes& c = plan.convs[i];
    if (!float_paths[i] || int8_nodes[i].empty() || !on_int8_path.calls(int8_nodes[i])) continue;
    const FloatPath& path = *float_paths[i];
    const double int8 = on_int8_path.node_s(int8_nodes[i], c.kernels);
    double total = 0, edges = 0;
    bool known = true;
    auto add = [&](const std::string& node, double share, bool edge) {
      const double s = on_float_path.node_s(node, c.kernels);
      if (s < 0) known = false;
      total += s * share;
      if (edge) edges += s * share;
    };
    if (!path.dequantize.empty()) add(path.dequantize, 1.0 / path.dequantize_readers, true);
    for (const auto& [node, quantize] : path.nodes) add(node, 1.0, quantize);
    if (int8 > 0) c.int8_s = int8;
    if (known && total > 0) {
      c.float_s = total;
      c.edges_s = edges;
    }
  }
  return plan;
}

std::vector<KernelToMeasure> Int8PathPlan::kernels_moved_to_f32() const {
  std::vector<KernelToMeasure> out;
  for (const auto& l : convs)
    if (l.keeps_float()) out.insert(out.end(), l.kernels.begin(), l.kernels.end());
  return out;
}

std::vector<TwoForms> two_forms(const Int8PathPlan& plan) {
  std::vector<TwoForms> rows;
  for (const Int8PathTimes& c : plan.convs)
    rows.push_back({c.conv, c.int8_s, c.float_s,
                    !c.measured()     ? "rule"
                    : c.keeps_float() ? "float"
                                      : "int8"});
  return rows;
}

std::string describe(const Int8PathPlan& plan) {
  return describe_two_forms("int8 paths by the records (quantized convs)", "int8", "float",
                            two_forms(plan), kFloatPathMargin, plan.unmeasured.size(), "int8");
}

std::string format_table(const Int8PathPlan& plan) {
  return format_two_forms("int8 against the float path, per quantized conv", "int8", "float",
                          two_forms(plan));
}

}  // namespace kiln::network
