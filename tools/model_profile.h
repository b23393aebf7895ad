// Per-layer timing of a compiled model: `kiln run --profile` and `kiln report` time every step
// of model.so through its step hook (kernel_abi.h: kiln_model_step_hook), which the generated
// executor calls after each step. The hook lives in the .so, so profiling needs no special
// build and costs nothing when unused.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/model.h"

namespace kiln::tools {

struct ModelProfile {
  int threads = 1;
  int runs = 0;
  double total_ms = 0;           // median over the runs of a whole run
  std::vector<double> step_ms;   // median over the runs, per step (model.json's "layers")
};

// Runs `m` `runs` times with the step hook set and returns the medians. `steps` is the step
// count (the length of model.json's "layers"). UserError when the .so has no step hook (built
// before kiln had one) or reports a step index outside [0, steps).
ModelProfile profile_model(const Model& m, const std::vector<const void*>& inputs,
                           const std::vector<void*>& outputs, size_t steps, int runs);

// DIR/model.json, the description kiln compile writes beside model.so; UserError when it is
// missing or has no "layers" list.
nlohmann::json read_model_json(const std::string& dir);

// As JSON ({"threads", "runs", "total_ms", "step_ms": [...]}) and back; read_profile names the
// file and what is wrong with it.
std::string profile_to_json(const ModelProfile& p);
ModelProfile read_profile(const std::string& path);

}  // namespace kiln::tools
