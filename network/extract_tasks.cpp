#include "network/extract_tasks.h"

#include <map>

#include "network/choose_template.h"
#include "network/lower_network.h"
#include "network/prepare_graph.h"
#include "network/ranged_batch.h"

namespace kiln::network {
namespace {

bool tunable_task(const std::vector<const schedules::OpTemplate*>& templates,
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

// The network as an untuned compile builds it: no records, so every workload gets the default
// template's fallback.
NetworkProgram untuned_program(const std::string& model_path, const Target& target,
                               const graph::ShapeBindings& input_shapes,
                               const PrecisionOptions& precision) {
  PreparedGraph prepared = prepare_graph(model_path, input_shapes, target, precision);
  return lower_network(prepared.graph, target, tuner::HistoryBest());
}

// Unique workloads in the order first computed, with their calls summed over the programs.
class TaskList {
 public:
  explicit TaskList(const Target& target) : target_(target) {}
  void add(const NetworkProgram& program) {
    for (const Task& t : program.tasks) {
      auto [it, inserted] = index_.try_emplace(t.workload.str(), tasks_.size());
      if (inserted)
        tasks_.push_back({t.workload, 0, tuning_templates(t.workload, target_),
                          block_knobs(t.config), t.tpl, t.config});
      tasks_[it->second].occurrences += t.calls;
    }
  }
  std::vector<ExtractedTask> tunable() && {
    std::vector<ExtractedTask> out;
    for (ExtractedTask& t : tasks_)
      if (tunable_task(t.templates, t.workload, target_)) out.push_back(std::move(t));
    return out;
  }

 private:
  const Target& target_;
  std::vector<ExtractedTask> tasks_;
  std::map<std::string, size_t> index_;  // workload -> position in `tasks_`
};

// The kernels of the network at `input_shapes`: with --precisions, those of both forms.
void add_programs(TaskList& tasks, const std::string& model_path, const Target& target,
                  const graph::ShapeBindings& input_shapes, const PrecisionOptions& precision) {
  if (precision.half_and_f32) {
    // --precisions f32,bf16: the kernels of the half network and of the f32 one (half_paths.h).
    PrecisionOptions f32 = precision;
    f32.dtype = ir::DataType::f32();
    tasks.add(untuned_program(model_path, target, input_shapes, precision));
    tasks.add(untuned_program(model_path, target, input_shapes, f32));
    return;
  }
  if (precision.int8.force != Int8Paths::Force::Both) {
    tasks.add(untuned_program(model_path, target, input_shapes, precision));
    return;
  }
  // --precisions int8,f32: the kernels of both paths of every quantized conv (int8_paths.h).
  for (Int8Paths::Force path : {Int8Paths::Force::Int8, Int8Paths::Force::Float}) {
    PrecisionOptions one = precision;
    one.int8 = {path, {}};
    tasks.add(untuned_program(model_path, target, input_shapes, one));
  }
}

// The precision a plain compile takes (the rule, one form): what decides the batch classes.
PrecisionOptions one_form(PrecisionOptions p) {
  p.half_and_f32 = false;
  if (p.int8.force == Int8Paths::Force::Both) p.int8 = {};
  return p;
}

}  // namespace

std::vector<ExtractedTask> extract_tasks(const std::string& model_path, const Target& target,
                                         const graph::ShapeBindings& input_shapes,
                                         const PrecisionOptions& precision) {
  TaskList tasks(target);
  add_programs(tasks, model_path, target, input_shapes, precision);
  return std::move(tasks).tunable();
}

std::vector<ExtractedTask> extract_ranged_batch_tasks(
    const std::string& model_path, const Target& target, const graph::ShapeBindings& input_shapes,
    const graph::DimRange& range, const PrecisionOptions& precision,
    const std::optional<std::vector<int64_t>>& classes, std::vector<int64_t>* built_classes) {
  const BatchRange batch = plan_batch_range(model_path, input_shapes, range);
  graph::ShapeBindings shapes = input_shapes;
  shapes[batch.symbol] = {1};
  TaskList tasks(target);
  add_programs(tasks, model_path, target, shapes, precision);
  *built_classes = batch_classes(
      batch, untuned_program(model_path, target, shapes, one_form(precision)), classes);
  for (int64_t size : *built_classes) {
    shapes[batch.symbol] = {size};
    add_programs(tasks, model_path, target, shapes, precision);
  }
  return std::move(tasks).tunable();
}

}  // namespace kiln::network
