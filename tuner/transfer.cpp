#include "tuner/transfer.h"

#include <algorithm>
#include <cstdio>

#include "cost_model/ir_features.h"
#include "cost_model/knob_features.h"
#include "tuner/builder.h"
#include "tuner/records.h"

namespace kiln::tuner {
namespace {

std::vector<float> features_of(const schedules::OpTemplate& tpl, const TuningRecord& r,
                               const std::string& features) {
  if (features == "knob") return cost_model::knob_features(tpl.space(r.workload, r.target), r.config);
  const BuiltKernel k = lower_template(tpl, r.workload, r.target, r.config, "transfer");
  return cost_model::ir_features(with_sizes_of(k, r.workload));
}

// Features of `r`, from `cache` when it has them; empty when the template no longer builds the
// config (it then teaches nothing, and is remembered as such).
std::vector<float> cached_features(const schedules::OpTemplate& tpl, const TuningRecord& r,
                                   const std::string& task, const std::string& features,
                                   FeatureCache* cache) {
  const std::string key = features + "|" + task + "|" + r.config.to_json();
  if (cache)
    if (auto hit = cache->find(key); hit != cache->end()) return hit->second;
  std::vector<float> x;
  try {
    x = features_of(tpl, r, features);
  } catch (const std::exception&) {
  }
  if (cache) (*cache)[key] = x;
  return x;
}

}  // namespace

PriorSamples transfer_samples(const std::vector<std::string>& logs, const schedules::OpTemplate& tpl,
                              const std::string& features, size_t per_task) {
  LoadedRecords loaded = load_records(logs);
  for (const RecordProblem& p : loaded.problems)
    std::fprintf(stderr, "kiln: --transfer: skipping %s\n", p.str().c_str());
  return transfer_samples(loaded.records, tpl, features, per_task);
}

PriorSamples transfer_samples(const std::vector<TuningRecord>& all, const schedules::OpTemplate& tpl,
                              const std::string& features, size_t per_task, FeatureCache* cache) {
  std::map<std::string, std::vector<const TuningRecord*>> by_task;
  for (const TuningRecord& r : all)
    if (r.template_name == tpl.name() && r.result.ok()) by_task[task_key(r)].push_back(&r);
  PriorSamples prior;
  for (auto& [task, records] : by_task) {
    std::sort(records.begin(), records.end(),
              [](const TuningRecord* a, const TuningRecord* b) { return a->gflops() > b->gflops(); });
    if (records.size() > per_task) records.resize(per_task);
    const double best = records.front()->gflops();
    uint32_t rows = 0;
    for (const TuningRecord* r : records) {
      std::vector<float> x = cached_features(tpl, *r, task, features, cache);
      if (x.empty()) continue;
      prior.x.push_back(std::move(x));
      prior.y.push_back(best > 0 ? static_cast<float>(r->gflops() / best) : 0.0f);
      ++rows;
    }
    if (rows > 0) prior.groups.push_back(rows);
  }
  return prior;
}

}  // namespace kiln::tuner
