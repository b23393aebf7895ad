#include "network/assign_precision.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/target/profiles.h"
#include "network/node_choice.h"
#include "schedules/conv2d/templates.h"
#include "schedules/registry.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;
using ir::DataType;

namespace {

bool is_half(DataType t) {
  return t == DataType::bf16() || t == DataType::f16();
}

// The kind of kernel a node becomes when it is one the pass may lower: "conv2d" (groups 1: the
// half templates' form), "depthwise" (groups = input = output channels), "dense" (constant 2-D
// weights), else "".
std::string half_candidate_op(const Graph& g, const Node& n) {
  if (n.op_type == "Conv") {
    if (n.attr_int("group", 1) == 1) return "conv2d";
    return is_depthwise_conv(g, n) ? "depthwise" : "";
  }
  if (n.op_type != "Gemm" && n.op_type != "MatMul") return "";
  if (!g.is_constant(n.inputs.at(1))) return "";
  if (n.op_type == "Gemm") return n.attr_int("transA", 0) == 0 ? "dense" : "";
  return g.initializers.at(n.inputs[1]).rank() == 2 ? "dense" : "";
}

// Whether a template made for `dtype` (one that does not also compute f32: the generic ones
// would only widen every element) builds `op` on `target`, on a small probe workload.
// Depthwise convolutions are the exception: memory-bound, they gain from half loads and stores
// alone, which conv2d.depthwise does in any type (f32 arithmetic in between; measured on
// MobileNetV2's 144-channel 56x56 layer, x86-avx512: 0.13 ms in bf16 against 0.25 ms in f32),
// and in a half region they save the two casts around each one. So they run half on targets
// with half convolutions.
bool has_half_kernel(const std::string& op, DataType dtype, const Target& target) {
  if (op == "depthwise") {
    schedules::Workload dw{"conv2d",
                           {{"N", 1}, {"C", 16}, {"H", 8}, {"W", 8}, {"O", 16}, {"KH", 3},
                            {"KW", 3}, {"groups", 16}},
                           dtype,
                           {}};
    return has_half_kernel("conv2d", dtype, target) &&
           schedules::conv2d_depthwise_template().applies(dw, target);
  }
  schedules::Workload probe =
      op == "conv2d"
          ? schedules::Workload{"conv2d",
                                {{"N", 1}, {"C", 16}, {"H", 8}, {"W", 8}, {"O", 16}, {"KH", 3},
                                 {"KW", 3}, {"groups", 1}},
                                dtype,
                                {}}
          : schedules::Workload{"dense", {{"M", 1}, {"N", 16}, {"K", 16}}, dtype, {}};
  for (const schedules::OpTemplate* tpl : schedules::all_templates()) {
    const std::vector<DataType> types = tpl->dtypes();
    if (tpl->op() != op || std::count(types.begin(), types.end(), DataType::f32())) continue;
    if (tpl->applies(probe, target)) return true;
  }
  return false;
}

// The activation inputs of node `n` that its half kernel reads in the half type: the data
// input, and the residual of a fused Add (the other epilogue operands are constants).
std::vector<std::string*> half_inputs(const Graph& g, Node& n) {
  std::vector<std::string*> out;
  if (!g.is_constant(n.inputs[0])) out.push_back(&n.inputs[0]);
  for (Node& e : n.epilogue)
    for (std::string& v : e.inputs)
      if (!v.empty() && !g.is_constant(v)) out.push_back(&v);
  return out;
}

// The candidates whose result reaches a graph output through no other candidate: walking
// back from the outputs through the nodes that are not candidates.
std::set<size_t> last_layers(const Graph& g, const std::vector<bool>& candidate) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& v : g.nodes[i].outputs)
      if (!v.empty()) producer[v] = i;
  std::set<size_t> last, seen;
  std::vector<std::string> work(g.outputs.begin(), g.outputs.end());
  while (!work.empty()) {
    std::string v = work.back();
    work.pop_back();
    auto it = producer.find(v);
    if (it == producer.end() || !seen.insert(it->second).second) continue;
    const Node& n = g.nodes[it->second];
    if (candidate[it->second]) {
      last.insert(it->second);
      continue;
    }
    for (const std::string& in : n.inputs) work.push_back(in);
    for (const Node& e : n.epilogue)
      for (const std::string& in : e.inputs) work.push_back(in);
  }
  return last;
}

// Per value: whether every reader (node input, fused epilogue operand) is a half node; graph
// outputs count as f32 readers.
std::map<std::string, bool> read_only_by_half(const Graph& g, const std::vector<bool>& half) {
  std::map<std::string, bool> only_half;
  for (const std::string& v : g.outputs) only_half[v] = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto note = [&](const std::string& v) {
      if (v.empty()) return;
      auto [it, inserted] = only_half.try_emplace(v, half[i]);
      if (!inserted) it->second = it->second && half[i];
    };
    for (const std::string& v : g.nodes[i].inputs) note(v);
    for (const Node& e : g.nodes[i].epilogue)
      for (const std::string& v : e.inputs) note(v);
  }
  return only_half;
}

// Which nodes run in the half type: candidates of a supported kind, less the last layers
// when kept f32. conv2d.depthwise writes only its input type (no f32 form), so a depthwise
// conv runs half only where every reader is half; leaving one f32 may change what its
// producer's readers are, hence the loop to a fixpoint.
std::vector<bool> half_nodes(const Graph& g, const std::map<std::string, bool>& supported,
                             const PrecisionOptions& o, PrecisionCounts& counts) {
  std::vector<bool> candidate(g.nodes.size(), false), half(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string op = half_candidate_op(g, g.nodes[i]);
    candidate[i] = !op.empty();
    half[i] = candidate[i] && supported.at(op);
    // The records time this layer faster in f32 (half_paths.h), or --max-error keeps it f32.
    if (!half[i]) continue;
    auto f32 = o.half_measured_f32.find(node_key(g.nodes[i].name, g.nodes[i].outputs));
    if (f32 != o.half_measured_f32.end()) {
      half[i] = false;
      ++(f32->second.rfind(kKeptPreciseByBudget, 0) == 0 ? counts.budget_f32 : counts.measured_f32);
    }
  }
  if (o.keep_last_f32)
    for (size_t i : last_layers(g, candidate)) half[i] = false;
  for (bool changed = true; changed;) {
    changed = false;
    const std::map<std::string, bool> only_half = read_only_by_half(g, half);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!half[i] || half_candidate_op(g, g.nodes[i]) != "depthwise") continue;
      auto it = only_half.find(g.nodes[i].outputs[0]);
      if (it != only_half.end() && it->second) continue;
      half[i] = false;
      changed = true;
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (half[i]) ++counts.half_nodes;
    else if (candidate[i]) ++counts.kept_f32;
  }
  return half;
}

// One Cast per f32 value that half nodes read, placed before its first reader. Returns how
// many.
int insert_casts(Graph& g, const std::vector<bool>& half, DataType dtype) {
  std::vector<Node> nodes;
  std::map<std::string, std::string> cast_of;  // f32 value -> its half copy
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node n = g.nodes[i];
    if (half[i]) {
      for (std::string* v : half_inputs(g, n)) {
        std::optional<graph::ValueType> type = g.type_of(*v);
        internal_check(type.has_value()) << "assign_precision: no type for '" << *v << "'";
        if (type->dtype == dtype) continue;
        auto [it, inserted] = cast_of.try_emplace(*v, "");
        if (inserted) {
          it->second = g.unique_name(*v + "." + dtype.str());
          Node cast;
          cast.name = it->second;
          cast.op_type = "Cast";
          cast.inputs = {*v};
          cast.outputs = {it->second};
          cast.attrs["to"] = dtype.str();
          g.types[it->second] = graph::ValueType{dtype, type->shape};
          nodes.push_back(std::move(cast));
        }
        *v = it->second;
      }
    }
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  return static_cast<int>(cast_of.size());
}

}  // namespace

std::string PrecisionCounts::str() const {
  return std::to_string(half_nodes) + " conv/dense in half precision, " + std::to_string(kept_f32) +
         " kept f32" +
         (measured_f32 > 0 ? " (" + std::to_string(measured_f32) + " measured faster in f32)"
                           : "") +
         (budget_f32 > 0 ? " (" + std::to_string(budget_f32) + " by --max-error)" : "") + ", " +
         std::to_string(casts) + " casts";
}

bool is_depthwise_conv(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.attr_int("group", 1) == 1) return false;
  const std::vector<int64_t> w = g.type_of(n.inputs.at(1))->dims();
  return w.size() == 4 && w[0] == n.attr_int("group", 1) && w[1] == 1;
}

bool has_half_kernels(const Target& target, DataType dtype) {
  return has_half_kernel("conv2d", dtype, target) || has_half_kernel("dense", dtype, target);
}

// The presets, then the CPU and board profiles, whose features give `dtype` kernels.
std::vector<std::string> targets_with_half_kernels(DataType dtype) {
  std::vector<std::string> names = target_preset_names();
  for (const CpuProfile& p : cpu_profiles()) names.push_back(p.name);
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const Target t = target_from_name(name);
    if (has_half_kernels(t, dtype)) out.push_back(name);
  }
  return out;
}

PrecisionCounts assign_precision(Graph& g, const Target& target, const PrecisionOptions& o) {
  PrecisionCounts counts;
  if (o.dtype == DataType::f32()) return counts;
  user_check(is_half(o.dtype)) << "--dtype " << o.dtype.str()
                               << " is not supported (valid: f32, bf16, f16)";
  const std::map<std::string, bool> supported = {
      {"conv2d", has_half_kernel("conv2d", o.dtype, target)},
      {"depthwise", has_half_kernel("depthwise", o.dtype, target)},
      {"dense", has_half_kernel("dense", o.dtype, target)}};
  if (!supported.at("conv2d") && !supported.at("dense")) {
    std::string presets;
    for (const std::string& p : targets_with_half_kernels(o.dtype))
      presets += (presets.empty() ? "" : ", ") + p;
    user_error() << "target " << target.name << " has no " << o.dtype.str()
                 << " conv2d or dense kernels (its features: " << target.feature_string()
                 << "); targets that have them: " << (presets.empty() ? "none" : presets)
                 << "; or compile in f32";
  }
  const std::vector<bool> half = half_nodes(g, supported, o, counts);
  const std::map<std::string, bool> stays_half = read_only_by_half(g, half);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!half[i]) continue;
    const std::string& out = g.nodes[i].outputs[0];
    if (auto it = stays_half.find(out); it != stays_half.end() && it->second)
      g.types[out].dtype = o.dtype;
  }
  counts.casts = insert_casts(g, half, o.dtype);
  return counts;
}

}  // namespace kiln::network
