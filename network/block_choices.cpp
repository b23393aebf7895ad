#include "network/block_choices.h"

#include <algorithm>

namespace kiln::network {

std::vector<schedules::Config> block_choices(const ExtractedTask& task, const Target& target,
                                             size_t n) {
  std::vector<schedules::Config> out = {task.blocks};
  if (task.blocks.values().empty() || task.templates.empty()) return out;
  const schedules::ConfigSpace space = task.templates.front()->space(task.workload, target);
  auto offers = [&](const std::string& knob, int64_t value) {
    for (const schedules::Knob& k : space.knobs())
      if (k.name == knob) return std::find(k.choices.begin(), k.choices.end(), value) != k.choices.end();
    return false;
  };
  const int64_t lanes = target.lanes(ir::DataType::f32());
  for (int64_t block : {lanes, 2 * lanes, lanes / 2}) {
    if (out.size() >= n) break;
    if (block < 1) continue;
    schedules::Config pin;
    bool offered = true;
    for (const auto& [knob, value] : task.blocks.values()) {
      offered = offered && offers(knob, block);
      pin.set(knob, block);
    }
    if (offered && std::find(out.begin(), out.end(), pin) == out.end()) out.push_back(pin);
  }
  return out;
}

}  // namespace kiln::network
