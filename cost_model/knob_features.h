// The plain feature vector to compare the IR features against: a config's knob values as
// they are, what a cost model sees when it knows nothing of the code (AutoTVM's "knob"
// features). Fixed length: for each of the first kMaxKnobs knobs of the space, in the
// space's order, its value and the index of that value among the knob's choices; knobs
// past the space's end are -1, -1 (a real index is never negative).
#pragma once

#include <string>
#include <vector>

#include "schedules/config.h"

namespace kiln::cost_model {

constexpr int kMaxKnobs = 12;

// 2 * kMaxKnobs.
size_t knob_feature_count();
// "K0.value", "K0.choice", "K1.value", ...
std::vector<std::string> knob_feature_names();

// UserError when the config lacks a knob of the space or picks a value it does not offer.
std::vector<float> knob_features(const schedules::ConfigSpace& space, const schedules::Config& c);

}  // namespace kiln::cost_model
