#include "tuner/transfer.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "cost_model/ir_features.h"
#include "cost_model/knob_features.h"
#include "tuner/builder.h"
#include "tuner/records.h"

namespace kiln::tuner {

PriorSamples transfer_samples(const std::vector<std::string>& logs, const schedules::OpTemplate& tpl,
                              const std::string& features, size_t per_task) {
  LoadedRecords loaded = load_records(logs);
  for (const RecordProblem& p : loaded.problems)
    std::fprintf(stderr, "kiln: --transfer: skipping %s\n", p.str().c_str());
  std::map<std::string, std::vector<const TuningRecord*>> by_task;
  for (const TuningRecord& r : loaded.records)
    if (r.template_name == tpl.name() && r.result.ok()) by_task[task_key(r)].push_back(&r);
  PriorSamples prior;
  for (auto& [task, records] : by_task) {
    std::sort(records.begin(), records.end(),
              [](const TuningRecord* a, const TuningRecord* b) { return a->gflops() > b->gflops(); });
    if (records.size() > per_task) records.resize(per_task);
    const double best = records.front()->gflops();
    uint32_t rows = 0;
    for (const TuningRecord* r : records) {
      try {
        prior.x.push_back(features == "knob"
                              ? cost_model::knob_features(tpl.space(r->workload, r->target), r->config)
                              : cost_model::ir_features(
                                    lower_template(tpl, r->workload, r->target, r->config, "transfer")
                                        .func));
      } catch (const std::exception&) {
        continue;  // a config the template no longer builds teaches nothing
      }
      prior.y.push_back(best > 0 ? static_cast<float>(r->gflops() / best) : 0.0f);
      ++rows;
    }
    if (rows > 0) prior.groups.push_back(rows);
  }
  return prior;
}

}  // namespace kiln::tuner
