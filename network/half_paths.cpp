#include "network/half_paths.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "compiler/graph/rewrites/graph_match.h"
#include "network/lower_network.h"
#include "network/node_choice.h"
#include "network/prepare_graph.h"
#include "tuner/history_best.h"

namespace kiln::network {
namespace {

// A conv/dense layer the half network runs in `dtype`, and the casts it reads.
struct HalfLayer {
  std::string node;
  std::vector<std::pair<std::string, int>> casts;  // a Cast's node_key and how many read it
};

std::vector<HalfLayer> half_layers(const graph::Graph& g, ir::DataType dtype) {
  std::vector<HalfLayer> out;
  for (const graph::Node& n : g.nodes) {
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    const auto in = g.type_of(n.inputs.at(0));
    if (!in || in->dtype != dtype) continue;
    HalfLayer layer{node_key(n.name, n.outputs), {}};
    std::vector<std::string> read(n.inputs.begin(), n.inputs.end());
    for (const graph::Node& e : n.epilogue)
      read.insert(read.end(), e.inputs.begin(), e.inputs.end());
    std::set<std::string> seen;
    for (const std::string& v : read)
      if (const graph::Node* cast = graph::producer_op(g, v, "Cast"); cast && seen.insert(v).second)
        layer.casts.push_back(
            {node_key(cast->name, cast->outputs), std::max<int>(1, graph::readers(g, v).size())});
    out.push_back(std::move(layer));
  }
  return out;
}

// Ties each depthwise layer of the half network to the half layers that read it, and gives
// every member of a group of several, all timed, the group's sums.
void tie_depthwise_readers(const graph::Graph& g, std::vector<HalfPathTimes>& layers) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < layers.size(); ++i) index[layers[i].node] = i;
  std::vector<size_t> root(layers.size());
  for (size_t i = 0; i < root.size(); ++i) root[i] = i;
  auto find = [&](size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (const graph::Node& n : g.nodes) {
    auto dw = index.find(node_key(n.name, n.outputs));
    if (dw == index.end() || !is_depthwise_conv(g, n)) continue;
    for (const graph::Node* r : graph::readers(g, n.outputs[0]))
      if (auto it = index.find(node_key(r->name, r->outputs)); it != index.end())
        root[find(it->second)] = find(dw->second);
  }
  std::map<size_t, std::vector<size_t>> groups;
  for (size_t i = 0; i < layers.size(); ++i) groups[find(i)].push_back(i);
  for (const auto& [r, members] : groups) {
    if (members.size() < 2) continue;
    double half = 0, f32 = 0;
    bool timed = true;
    for (size_t i : members) {
      timed = timed && layers[i].measured();
      half += layers[i].half_s;
      f32 += layers[i].f32_s;
    }
    if (!timed) continue;  // each as the rule decides: not all known
    for (size_t i : members) {
      layers[i].group_size = static_cast<int>(members.size());
      layers[i].group_half_s = half;
      layers[i].group_f32_s = f32;
    }
  }
}

}  // namespace

std::string HalfPathTimes::reason(ir::DataType dtype) const {
  std::string r = std::string(kHalfMeasuredSlower) + ": " + dtype.str() + " " + format_ms(half_s) +
                  " ms" + (casts_s > 0 ? " (" + format_ms(casts_s) + " of it casts)" : "") +
                  ", f32 " + format_ms(f32_s) + " ms";
  if (group_size > 1)
    r += "; with the depthwise conv it is tied to, " + std::to_string(group_size) +
         " layers: " + dtype.str() + " " + format_ms(group_half_s) + " ms, f32 " +
         format_ms(group_f32_s) + " ms";
  return r;
}

std::map<std::string, std::string> HalfPathPlan::measured_f32() const {
  std::map<std::string, std::string> out;
  for (const HalfPathTimes& l : layers)
    if (l.keeps_f32()) out[l.node] = l.reason(dtype);
  return out;
}

HalfPathPlan plan_half_paths(const std::string& model_path, const graph::ShapeBindings& shapes,
                             const Target& target, const PrecisionOptions& precision,
                             const std::vector<tuner::TuningRecord>& records) {
  HalfPathPlan plan;
  plan.dtype = precision.dtype;
  if (precision.dtype == ir::DataType::f32()) return plan;
  PrecisionOptions as_half = precision, as_f32 = precision;
  as_half.half_measured_f32.clear();
  as_half.half_and_f32 = as_f32.half_and_f32 = false;
  as_f32.dtype = ir::DataType::f32();
  PreparedGraph half = prepare_graph(model_path, shapes, target, as_half);
  const std::vector<HalfLayer> layers = half_layers(half.graph, precision.dtype);
  if (layers.empty()) return plan;
  PreparedGraph f32 = prepare_graph(model_path, shapes, target, as_f32);
  const tuner::HistoryBest history(records);
  const NetworkProgram half_program = lower_network(half.graph, target, history);
  const NetworkProgram f32_program = lower_network(f32.graph, target, history);
  const RecordTimes times(records, target);
  std::set<std::string> listed;
  const ProgramTimes in_half(half_program, times, plan.unmeasured, listed);
  const ProgramTimes in_f32(f32_program, times, plan.unmeasured, listed);
  for (const HalfLayer& layer : layers) {
    HalfPathTimes& t = plan.layers.emplace_back();
    t.node = layer.node;
    if (!in_half.calls(layer.node) || !in_f32.calls(layer.node)) continue;
    double total = in_half.node_s(layer.node, t.kernels), casts = 0;
    bool known = total > 0;
    for (const auto& [cast, readers] : layer.casts) {
      const double s = in_half.node_s(cast, t.kernels);
      known = known && s >= 0;
      casts += s / readers;
    }
    const double f = in_f32.node_s(layer.node, t.kernels);
    if (known) {
      t.half_s = total + casts;
      t.casts_s = casts;
    }
    if (f > 0) t.f32_s = f;
  }
  tie_depthwise_readers(half.graph, plan.layers);
  return plan;
}

std::vector<KernelToMeasure> HalfPathPlan::kernels_moved_to_f32() const {
  std::vector<KernelToMeasure> out;
  for (const auto& l : layers)
    if (l.keeps_f32()) out.insert(out.end(), l.kernels.begin(), l.kernels.end());
  return out;
}

std::vector<TwoForms> two_forms(const HalfPathPlan& plan) {
  std::vector<TwoForms> rows;
  for (const HalfPathTimes& l : plan.layers)
    rows.push_back({l.node, l.half_s, l.f32_s,
                    !l.measured()   ? "rule"
                    : l.keeps_f32() ? "f32"
                                    : plan.dtype.str()});
  return rows;
}

std::string describe(const HalfPathPlan& plan) {
  const std::string half = plan.dtype.str();
  return describe_two_forms(half + " layers by the records", half, "f32", two_forms(plan),
                            kF32Margin, plan.unmeasured.size(), half);
}

std::string format_table(const HalfPathPlan& plan) {
  return format_two_forms(plan.dtype.str() + " against f32, per layer", plan.dtype.str(), "f32",
                          two_forms(plan));
}

}  // namespace kiln::network
