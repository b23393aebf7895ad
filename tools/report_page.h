// The HTML page of `kiln report`: what a compiled model spends its time on and how close each
// layer gets to the machine's limits. One self-contained file (inline SVG and CSS, no script),
// readable in any browser and attachable to a bug report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/records_plot.h"
#include "tools/roofline.h"

namespace kiln::tools {

// One step of the model (model.json "layers"), with its time when it was measured.
struct ReportLayer {
  std::string node, op, workload, tpl;
  bool tuned = false;
  double flops = 0;
  double bytes = 0;
  double ms = -1;  // < 0: not measured
};

// A tuned kernel of model.json: how steady its record's times were and how it compared with
// the untuned config where the tune timed both side by side (tuner/history_best.h).
struct TunedKernel {
  std::string kernel, tpl, workload, verdict;
  double spread = 0;  // (max - min) / median of the record's times
  bool kept_untuned = false;
};

// A layer whose two precisions the records timed (model.json "int8_paths", "half_paths":
// network/int8_paths.h, half_paths.h).
struct PrecisionChoice {
  std::string node, low;          // low: "int8", "bf16" or "f16"
  double low_ms = 0, f32_ms = 0;  // 0: not in the records
  std::string takes;              // the form taken, or "rule"
};

struct ReportData {
  std::string model_dir, target;
  uint64_t workspace_bytes = 0, naive_workspace_bytes = 0, params_bytes = 0;
  std::vector<ReportLayer> layers;
  std::optional<double> total_ms;  // a measured whole run
  int threads = 1;
  std::string timing_note;  // where the times come from, or why there are none
  std::optional<Roofline> roofline;
  std::vector<TuningCurve> curves;  // tuning curves of the model's tasks, when logs were given
  std::vector<TunedKernel> tuned;   // the kernels built from records
  std::vector<PrecisionChoice> precisions;  // each layer's two forms, where compile weighed them
  std::string error_budget;  // how --max-error fitted them, a sentence ("" without it)
  // A ranged batch (kiln compile --range): the whole model's latency at each batch timed here,
  // as (batch, ms).
  std::vector<std::pair<int64_t, double>> batch_ms;
};

// Horizontal bars, one per layer in execution order: its time, coloured tuned / fallback /
// layout conversion. Empty string when no layer has a time.
std::string layer_time_svg(const std::vector<ReportLayer>& layers);

// Log-log roofline: attainable GFLOPS = min(peak, bandwidth x FLOP/byte) for `threads`,
// with each timed layer that computes at its arithmetic intensity and achieved GFLOPS.
std::string roofline_svg(const std::vector<ReportLayer>& layers, const Roofline& r, int threads);

std::string report_html(const ReportData& d);

}  // namespace kiln::tools
