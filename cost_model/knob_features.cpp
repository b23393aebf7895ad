#include "cost_model/knob_features.h"

#include <algorithm>

namespace kiln::cost_model {

size_t knob_feature_count() {
  return 2 * kMaxKnobs;
}

std::vector<std::string> knob_feature_names() {
  std::vector<std::string> names;
  for (int k = 0; k < kMaxKnobs; ++k) {
    std::string knob(1, 'K');
    knob += std::to_string(k);
    names.push_back(knob + ".value");
    names.push_back(knob + ".choice");
  }
  return names;
}

std::vector<float> knob_features(const schedules::ConfigSpace& space, const schedules::Config& c) {
  space.validate(c);
  std::vector<float> out(knob_feature_count(), -1.0f);
  const auto& knobs = space.knobs();
  for (size_t k = 0; k < knobs.size() && k < kMaxKnobs; ++k) {
    int64_t v = c[knobs[k].name];
    auto at = std::find(knobs[k].choices.begin(), knobs[k].choices.end(), v);
    out[2 * k] = static_cast<float>(v);
    out[2 * k + 1] = static_cast<float>(at - knobs[k].choices.begin());
  }
  return out;
}

}  // namespace kiln::cost_model
