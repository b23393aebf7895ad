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

std::string kernel_key(const std::string& tpl, const schedules::Workload& w,
                       const schedules::Config& c) {
  return tpl + " " + w.str() + " " + c.to_json();
}

// The records' time of each exact kernel: the best ok one (the comparison rule of
// measure_result.h) among those apply-history-best weighs (settle_records).
class RecordTimes {
 public:
  RecordTimes(const std::vector<tuner::TuningRecord>& records, const Target& target) {
    const std::string mine = tuner::target_key(target);
    for (const tuner::TuningRecord& r : tuner::settle_records(records)) {
      if (!r.result.ok() || tuner::target_key(r.target) != mine) continue;
      double& best = best_[kernel_key(r.template_name, r.workload, r.config)];
      best = best > 0 ? std::min(best, r.result.cost()) : r.result.cost();
    }
  }
  // 0 when no record times it.
  double of(const Task& t) const {
    auto it = best_.find(kernel_key(t.tpl->name(), t.workload, t.config));
    return it == best_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> best_;
};

// The kernel calls of a program by graph node (node_key), and their time from the records.
class ProgramTimes {
 public:
  ProgramTimes(const NetworkProgram& p, const RecordTimes& times,
               std::vector<KernelToMeasure>& unmeasured, std::set<std::string>& listed)
      : program_(p), times_(times), unmeasured_(unmeasured), listed_(listed) {
    for (const Step& s : p.steps) steps_[s.node].push_back(s.task);
  }
  // The node's calls summed; -1 when one of them has no record time (then listed to measure).
  // A node without calls (folded away, or an epilogue of another) costs nothing.
  // `kernels` gets the node's kernels.
  double node_s(const std::string& node, std::vector<KernelToMeasure>& kernels) const {
    auto it = steps_.find(node);
    if (it == steps_.end()) return 0;
    double sum = 0;
    bool all = true;
    for (int task : it->second) {
      const Task& t = program_.tasks.at(task);
      kernels.push_back({t.tpl, t.workload, t.config});
      const double s = times_.of(t);
      if (s > 0) {
        sum += s;
        continue;
      }
      all = false;
      if (listed_.insert(kernel_key(t.tpl->name(), t.workload, t.config)).second)
        unmeasured_.push_back({t.tpl, t.workload, t.config});
    }
    return all ? sum : -1;  // -1: unknown (0 is "no call")
  }
  bool calls(const std::string& node) const { return steps_.count(node) > 0; }

 private:
  const NetworkProgram& program_;
  const RecordTimes& times_;
  std::vector<KernelToMeasure>& unmeasured_;
  std::set<std::string>& listed_;
  std::map<std::string, std::vector<int>> steps_;
};

// One conv's float path in the graph with every quantized conv on it.
struct FloatPath {
  const graph::Node* dequantize = nullptr;  // of the conv's input, when there is one
  int dequantize_readers = 1;
  std::vector<const graph::Node*> nodes;  // the conv, then up to its QuantizeLinear
  std::string quantized;                  // the value its int8 kernel would write
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
  path.nodes.push_back(conv);
  // Up to the QuantizeLinear: a Relu or another epilogue left unfused, at most a few.
  const graph::Node* at = conv;
  while (at->op_type != "QuantizeLinear" && !at->outputs.at(0).empty()) {
    const graph::Node* next = graph::only_reader(g, at->outputs.at(0));
    if (!next || path.nodes.size() > 4) return std::nullopt;
    path.nodes.push_back(next);
    at = next;
  }
  path.quantized = at->outputs.at(0);
  if (const graph::Node* dq = graph::producer_op(g, conv->inputs.at(0), "DequantizeLinear")) {
    path.dequantize = dq;
    path.dequantize_readers = std::max<int>(1, graph::readers(g, dq->outputs.at(0)).size());
  }
  return path;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s * 1e3);
  return buf;
}

}  // namespace

bool Int8PathTimes::keeps_float() const {
  return measured() && float_s * (1 + kFloatPathMargin) < int8_s;
}

std::string Int8PathTimes::reason() const {
  return std::string(kMeasuredSlower) + ": int8 kernel " + ms(int8_s) + " ms, float path " +
         ms(float_s) + " ms (" + ms(edges_s) + " of it quantize/dequantize)";
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

  // Each conv's nodes on either path, found before lowering (which adds constants).
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
    auto add = [&](const graph::Node& n, double share, bool edge) {
      const double s = on_float_path.node_s(node_key(n.name, n.outputs), c.kernels);
      if (s < 0) known = false;
      total += s * share;
      if (edge) edges += s * share;
    };
    if (path.dequantize) add(*path.dequantize, 1.0 / path.dequantize_readers, true);
    for (const graph::Node* n : path.nodes) add(*n, 1.0, n->op_type == "QuantizeLinear");
    if (int8 > 0) c.int8_s = int8;
    if (known && total > 0) {
      c.float_s = total;
      c.edges_s = edges;
    }
  }
  return plan;
}

std::string describe(const Int8PathPlan& plan) {
  if (plan.convs.empty()) return "";
  int int8 = 0, kept = 0, rule = 0;
  for (const Int8PathTimes& c : plan.convs)
    (c.measured() ? (c.keeps_float() ? kept : int8) : rule)++;
  std::ostringstream s;
  s << "int8 paths by the records: " << int8 << " quantized convs int8, " << kept
    << " float (measured faster by over " << int(kFloatPathMargin * 100) << "%)";
  if (rule > 0)
    s << ", " << rule << " by the rule (" << plan.unmeasured.size()
      << " of their kernels not in the records: kiln tune --precisions int8,f32 measures them)";
  return s.str();
}

std::string format_table(const Int8PathPlan& plan) {
  std::ostringstream s;
  s << "int8 against the float path, per quantized conv (ms per call):\n";
  char line[400];
  std::snprintf(line, sizeof line, "  %-10s %-10s %-8s %s\n", "int8", "float", "takes", "conv");
  s << line;
  for (const Int8PathTimes& c : plan.convs) {
    std::snprintf(line, sizeof line, "  %-10s %-10s %-8s %s\n",
                  c.int8_s > 0 ? ms(c.int8_s).c_str() : "-",
                  c.float_s > 0 ? ms(c.float_s).c_str() : "-",
                  !c.measured()     ? "rule"
                  : c.keeps_float() ? "float"
                                    : "int8",
                  c.conv.c_str());
    s << line;
  }
  return s.str();
}

}  // namespace kiln::network
