#include "network/extract_tasks.h"

#include <map>

#include "network/choose_template.h"
#include "network/lower_network.h"
#include "network/prepare_graph.h"

namespace kiln::network {
namespace {

bool tunable(const std::vector<const schedules::OpTemplate*>& templates,
             const schedules::Workload& w, const Target& target) {
  for (const schedules::OpTemplate* tpl : templates)
    if (tpl->space(w, target).size() > 1) return true;
  return false;
}

// The channel-block knobs of a config: what decides the NCHW[x]c layouts a conv reads and
// writes.
schedules::Config block_knobs(const schedules::Config& c) {
  schedules::Config blocks;
  for (const char* knob : {"ic_bn", "oc_bn", "c_bn"})
    if (c.has(knob)) blocks.set(knob, c[knob]);
  return blocks;
}

}  // namespace

std::vector<ExtractedTask> extract_tasks(const std::string& model_path, const Target& target,
                                         const graph::ShapeBindings& input_shapes,
                                         const PrecisionOptions& precision) {
  PreparedGraph prepared = prepare_graph(model_path, input_shapes, target, precision);
  // No records: every workload gets the default template's fallback, as an untuned compile.
  const NetworkProgram program = lower_network(prepared.graph, target, tuner::HistoryBest());
  std::vector<ExtractedTask> tasks;
  std::map<std::string, size_t> index;  // workload -> position in `tasks`
  for (const Task& t : program.tasks) {
    auto [it, inserted] = index.try_emplace(t.workload.str(), tasks.size());
    if (inserted)
      tasks.push_back({t.workload, 0, tuning_templates(t.workload, target),
                       block_knobs(t.config), t.tpl, t.config});
    tasks[it->second].occurrences += t.calls;
  }
  std::vector<ExtractedTask> out;
  for (ExtractedTask& t : tasks)
    if (tunable(t.templates, t.workload, target)) out.push_back(std::move(t));
  return out;
}

}  // namespace kiln::network
