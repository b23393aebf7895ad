// Tuning curves as a self-contained SVG (no library, no external fonts or scripts): best
// GFLOPS found so far against trial number, one line per curve, with axes, ticks, grid,
// axis labels, a title and a legend below the plot. `kiln records plot` draws one curve
// per log (per task within a log that holds several).
#pragma once

#include <string>
#include <vector>

#include "tuner/records.h"

namespace kiln::tools {

struct TuningCurve {
  std::string label;                // the legend entry, e.g. the log's file name
  std::vector<double> best_so_far;  // [i]: best GFLOPS after trial i + 1 (0 before any success)
};

// One curve per task (tuner::task_key) in first-seen order, labelled "template workload target".
std::vector<TuningCurve> curves_by_task(const std::vector<tuner::TuningRecord>& records);

std::string tuning_curves_svg(const std::vector<TuningCurve>& curves, const std::string& title);

}  // namespace kiln::tools
