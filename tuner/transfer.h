// Transfer learning (`kiln tune --transfer LOG...`): earlier records of the same template, on
// other shapes or targets, as training samples for the cost model before the first
// measurement of a new task: one group per earlier task, throughputs normalised to that
// task's best, so tasks of different speed teach the model only their orderings. A network
// tune uses the same samples to share one template's records between the network's tasks.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schedules/op_template.h"
#include "tuner/record.h"
#include "tuner/search/search.h"

namespace kiln::tuner {

// Features of records already computed, by task and config (lowering a config for its
// features is the expensive part; a network tune asks again after every slice).
using FeatureCache = std::map<std::string, std::vector<float>>;

// Samples from the correct records of `tpl` in `logs`; `features` is "ir" or "knob" (as the
// search uses). At most `per_task` records per task (the fastest first). Bad records are
// skipped (problems go to stderr).
PriorSamples transfer_samples(const std::vector<std::string>& logs, const schedules::OpTemplate& tpl,
                              const std::string& features, size_t per_task = 256);

// The same from records in memory; `cache` (optional) keeps features between calls.
PriorSamples transfer_samples(const std::vector<TuningRecord>& records,
                              const schedules::OpTemplate& tpl, const std::string& features,
                              size_t per_task = 256, FeatureCache* cache = nullptr);

}  // namespace kiln::tuner
