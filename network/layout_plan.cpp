#include "network/layout_plan.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "network/lower_network.h"
#include "network/op_table.h"
#include "schedules/registry.h"
#include "tuner/history_best.h"

namespace kiln::network {
namespace {

// The knobs that decide which NCHW[x]c layouts a conv reads and writes.
std::string block_key(const tuner::TuningRecord& r) {
  schedules::Config blocks;
  for (const char* knob : {"ic_bn", "oc_bn", "c_bn"})
    if (r.config.has(knob)) blocks.set(knob, r.config[knob]);
  return r.template_name + " " + blocks.to_json();
}

// A candidate of one node: what lowering would build and what the solver sees.
struct Candidate {
  NodeChoice choice;
  // Activation value -> layout read, in the kernel's argument order (the data input first:
  // the solver's tree follows each call's first input).
  std::vector<std::pair<std::string, Layout>> inputs;
  Layout output = 0;
};

class PlanBuilder {
 public:
  PlanBuilder(const graph::Graph& g, const Target& t, const std::vector<tuner::TuningRecord>& records)
      : graph_(g), target_(t) {
    for (const tuner::TuningRecord& r : tuner::settle_records(records)) {
      if (!r.result.ok() || tuner::target_key(r.target) != tuner::target_key(t)) continue;
      if (r.workload.op == "layout_transform") {
        double& best = conversion_records_[r.workload.str()];
        best = best > 0 ? std::min(best, r.result.cost()) : r.result.cost();
        continue;
      }
      // The best record of each block combination of each workload.
      auto& groups = groups_[r.workload.str()];
      auto [it, inserted] = groups.try_emplace(block_key(r), r);
      if (!inserted && r.result.cost() < it->second.result.cost()) it->second = r;
    }
    // What the compile with these records builds without a plan: every node's fallback state.
    graph::Graph copy = g;
    baseline_ = lower_network(copy, t, tuner::HistoryBest(records));
    for (size_t i = 0; i < baseline_.steps.size(); ++i) {
      baseline_task_[baseline_.steps[i].node] = baseline_.steps[i].task;
      baseline_step_[baseline_.steps[i].node] = i;
    }
  }

  LayoutPlan build() {
    graph::Graph g = graph_;  // map_node may add constants
    std::vector<std::vector<Candidate>> candidates;
    std::vector<size_t> baseline_state;
    for (const graph::Node& n : g.nodes) {
      const std::string key = node_key(n.name, n.outputs);
      const Task& fixed = baseline_.tasks.at(baseline_task_.at(key));
      // The kernel the compile builds for the node: its own mapping, or one the lowering
      // chooses itself (a cast at a --dtype edge, an elementwise op in a blocked layout, a
      // conv in the half type): those keep the compile's kernel, offered as the one state.
      MappedNode m;
      if (fixed.workload.op == "cast" && n.op_type == "Cast") {
        m.workload = fixed.workload;
        m.operands = {{"X", n.inputs.at(0)}};
      } else {
        m = map_node(g, n);
      }
      const bool as_mapped = m.workload.str() == fixed.workload.str();
      m.workload = fixed.workload;
      std::vector<Candidate> states;
      size_t baseline = 0;
      if (auto it = groups_.find(m.workload.str());
          as_mapped && it != groups_.end() && it->second.size() > 1) {
        for (const auto& [group, r] : it->second) {
          const schedules::OpTemplate& tpl = schedules::template_named(r.template_name);
          if (&tpl == fixed.tpl && r.config.to_json() == fixed.config.to_json())
            baseline = states.size();
          states.push_back(candidate(g, m, {&tpl, r.config, false, r.result.cost()}));
        }
      } else {
        // A kernel the lowering chose itself (a blocked elementwise op or concat) reads and
        // writes the layouts of its step's buffers, which its arguments' packs do not show.
        const Step* step = as_mapped ? nullptr : &baseline_.steps.at(baseline_step_.at(key));
        states.push_back(
            candidate(g, m, {fixed.tpl, fixed.config, fixed.untuned, fixed.tuned_cost_s}, step));
      }
      if (states.size() > 1) ++plan_.calls_with_choices;
      baseline_state.push_back(baseline);
      add_call(g, n, key, states);
      candidates.push_back(std::move(states));
    }
    problem_.conversion_s = [this](int v, Layout from, Layout to) {
      return conversion_s(v, from, to);
    };
    plan_.history_best = evaluate_layouts(problem_, baseline_state);
    plan_.chosen = solve_layouts(problem_);
    if (plan_.chosen.cost_s > plan_.history_best.cost_s) plan_.chosen = plan_.history_best;
    for (size_t c = 0; c < candidates.size(); ++c)
      plan_.choices[problem_.calls[c].name] = candidates[c][plan_.chosen.states[c]].choice;
    for (const auto& [key, w] : unmeasured_) plan_.unmeasured_conversions.push_back(w);
    return std::move(plan_);
  }

 private:
  // The layouts `choice`'s kernel reads its activations in and writes its output in.
  // `step`: the baseline's call of this kernel, whose buffers' layouts are the ones read and
  // written (null: the arguments' own layouts).
  Candidate candidate(const graph::Graph& g, const MappedNode& m, NodeChoice choice,
                      const Step* step = nullptr) const {
    Candidate c{choice, {}, 0};
    const schedules::ScheduledKernel k = choice.tpl->instantiate(m.workload, target_, choice.config);
    for (size_t i = 0; i < k.args.size(); ++i) {
      const schedules::KernelArg& a = k.args[i];
      auto layout = [&] {
        return step ? std::max<Layout>(0, baseline_.buffers.at(step->args.at(i)).layout)
                    : activation_layout(a, choice.tpl->name());
      };
      if (a.is_output) {
        c.output = layout();
        continue;
      }
      auto op = m.operands.find(a.logical.name);
      if (op == m.operands.end() || g.is_constant(op->second)) continue;
      const bool seen = std::any_of(c.inputs.begin(), c.inputs.end(),
                                    [&](const auto& in) { return in.first == op->second; });
      if (!seen) c.inputs.emplace_back(op->second, layout());
    }
    return c;
  }

  int value_id(const graph::Graph& g, const std::string& name) {
    auto [it, inserted] = value_ids_.try_emplace(name, static_cast<int>(problem_.values.size()));
    if (inserted) {
      const bool output = std::count(g.outputs.begin(), g.outputs.end(), name) > 0;
      problem_.values.push_back({name, g.type_of(name)->dims(), output});
    }
    return it->second;
  }

  void add_call(const graph::Graph& g, const graph::Node& n, const std::string& key,
                const std::vector<Candidate>& states) {
    LayoutCall call;
    call.name = key;
    for (const auto& [value, layout] : states.front().inputs) call.inputs.push_back(value_id(g, value));
    call.output = value_id(g, n.outputs.at(0));
    for (const Candidate& c : states) {
      LayoutState s;
      for (const auto& [value, layout] : states.front().inputs) {
        auto it = std::find_if(c.inputs.begin(), c.inputs.end(),
                               [&](const auto& in) { return in.first == value; });
        s.inputs.push_back(it == c.inputs.end() ? 0 : it->second);
      }
      s.output = c.output;
      s.cost_s = c.choice.cost_s;
      call.states.push_back(std::move(s));
    }
    problem_.calls.push_back(std::move(call));
  }

  // The log's time for the conversion, else the estimate of the header (noted as unmeasured).
  double conversion_s(int v, Layout from, Layout to) {
    const std::vector<int64_t>& d = problem_.values[v].dims;
    if (d.size() != 4) return kConversionOverhead_s;  // never blocked: not reached in practice
    const schedules::Workload w = conversion_workload(d, from, to);
    const std::string key = w.str();
    if (auto it = conversion_records_.find(key); it != conversion_records_.end()) return it->second;
    unmeasured_.try_emplace(key, w);
    const double bytes = 4.0 * (layout_elements(d, from) + layout_elements(d, to));
    return kConversionOverhead_s + bytes / kConversionBandwidth;
  }

  const graph::Graph& graph_;
  Target target_;
  std::map<std::string, std::map<std::string, tuner::TuningRecord>> groups_;  // workload -> blocks
  std::map<std::string, double> conversion_records_;                          // workload -> best s
  NetworkProgram baseline_;
  std::map<std::string, int> baseline_task_;  // node key -> task of the baseline
  std::map<std::string, size_t> baseline_step_;  // node key -> its step in the baseline
  LayoutProblem problem_;
  std::map<std::string, int> value_ids_;
  std::map<std::string, schedules::Workload> unmeasured_;  // conversions costed by estimate
  LayoutPlan plan_;
};

std::string ms(double s) {
  std::ostringstream o;
  o.precision(4);
  o << std::fixed << s * 1e3 << " ms";
  return o.str();
}

}  // namespace

LayoutPlan plan_layouts(const graph::Graph& graph, const Target& target,
                        const std::vector<tuner::TuningRecord>& records) {
  return PlanBuilder(graph, target, records).build();
}

std::string describe(const LayoutPlan& p) {
  std::ostringstream s;
  s << "layout choice: " << p.calls_with_choices << " calls with several tuned channel blocks; "
    << "kernels + conversions " << ms(p.chosen.cost_s) << " (" << p.chosen.conversions
    << " conversions, " << ms(p.chosen.conversion_s) << ") against " << ms(p.history_best.cost_s)
    << " (" << p.history_best.conversions << " conversions) for each kernel's fastest record";
  if (!p.unmeasured_conversions.empty())
    s << "; " << p.unmeasured_conversions.size() << " conversion times estimated";
  return s.str();
}

}  // namespace kiln::network
