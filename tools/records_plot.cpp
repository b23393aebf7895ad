#include "tools/records_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "tools/svg.h"

namespace kiln::tools {
namespace {

using svg::Axis;
using svg::escape_xml;
using svg::kColours;
using svg::make_axis;
using svg::num;
using svg::tick_label;
using svg::ticks;

// Plot geometry in SVG user units (pixels when rendered at 1:1).
constexpr double kWidth = 800, kPlotHeight = 440;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 60;
constexpr double kLegendRow = 20;

// " (best 78.0 GFLOPS at trial 156)": where the curve ends up, readable without the axis.
std::string legend_best(const std::vector<double>& best_so_far) {
  if (best_so_far.empty() || !(best_so_far.back() > 0)) return " (no valid measurement)";
  size_t at = 0;
  while (best_so_far[at] != best_so_far.back()) ++at;
  char buf[96];
  std::snprintf(buf, sizeof buf, " (best %.1f GFLOPS at trial %zu of %zu)", best_so_far.back(),
                at + 1, best_so_far.size());
  return buf;
}

}  // namespace

std::vector<TuningCurve> curves_by_task(const std::vector<tuner::TuningRecord>& records) {
  // One curve per task: mixing tasks would make "best so far" meaningless.
  std::vector<std::string> order;
  std::map<std::string, TuningCurve> by_task;
  for (const tuner::TuningRecord& r : records) {
    // The end-of-tune re-measurements of the best few are not trials: a curve of trials, as
    // the trial budget and bench/tune_bench.py count them.
    if (r.result.message == tuner::kRemeasured) continue;
    std::string key = tuner::task_key(r);
    auto [it, inserted] = by_task.try_emplace(key);
    if (inserted) {
      order.push_back(key);
      it->second.label = r.template_name + " " + r.workload.str() + " " + r.target.name;
    }
    std::vector<double>& b = it->second.best_so_far;
    b.push_back(std::max(b.empty() ? 0.0 : b.back(), r.gflops()));
  }
  std::vector<TuningCurve> curves;
  for (const std::string& key : order) curves.push_back(std::move(by_task[key]));
  return curves;
}

std::string tuning_curves_svg(const std::vector<TuningCurve>& curves, const std::string& title) {
  size_t trials = 1;
  double best = 0;
  for (const TuningCurve& c : curves) {
    trials = std::max(trials, c.best_so_far.size());
    for (double g : c.best_so_far) best = std::max(best, g);
  }
  Axis x = make_axis(static_cast<double>(trials), 1);
  Axis y = make_axis(best * 1.05, 0);  // headroom so the best line does not touch the frame
  double plot_w = kWidth - kLeft - kRight, plot_h = kPlotHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + v / x.max * plot_w; };
  auto py = [&](double v) { return kTop + plot_h - v / y.max * plot_h; };
  double height = kPlotHeight + kLegendRow * static_cast<double>(curves.size()) + 10;

  std::ostringstream out;
  out << svg::open_document(kWidth, height, title);

  // Grid lines and tick labels first, so the curves draw over them.
  out << "<g stroke=\"#e4e4e4\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n";
  for (double v : ticks(y))
    out << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(py(v)) << "\" x2=\""
        << num(kLeft + plot_w) << "\" y2=\"" << num(py(v)) << "\"/>\n";
  for (double v : ticks(x))
    out << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(px(v))
        << "\" y2=\"" << num(kTop + plot_h) << "\"/>\n";
  out << "</g>\n<g fill=\"#333\">\n";
  for (double v : ticks(y))
    out << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(py(v) + 4)
        << "\" text-anchor=\"end\">" << tick_label(v) << "</text>\n";
  for (double v : ticks(x))
    out << "<text x=\"" << num(px(v)) << "\" y=\"" << num(kTop + plot_h + 18)
        << "\" text-anchor=\"middle\">" << tick_label(v) << "</text>\n";
  out << "</g>\n";
  // The frame with tick marks.
  out << "<g stroke=\"#333\" stroke-width=\"1\" fill=\"none\" shape-rendering=\"crispEdges\">\n"
      << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\"" << num(plot_w)
      << "\" height=\"" << num(plot_h) << "\"/>\n";
  for (double v : ticks(y))
    out << "<line x1=\"" << num(kLeft - 4) << "\" y1=\"" << num(py(v)) << "\" x2=\"" << num(kLeft)
        << "\" y2=\"" << num(py(v)) << "\"/>\n";
  for (double v : ticks(x))
    out << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(kTop + plot_h) << "\" x2=\""
        << num(px(v)) << "\" y2=\"" << num(kTop + plot_h + 4) << "\"/>\n";
  out << "</g>\n";
  out << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kTop + plot_h + 42)
      << "\" text-anchor=\"middle\">trial</text>\n"
      << "<text transform=\"translate(22 " << num(kTop + plot_h / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">best GFLOPS so far</text>\n";

  // Each curve as a step line: a best value holds until a later trial beats it.
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::vector<double>& b = curves[i].best_so_far;
    const char* colour = kColours[i % std::size(kColours)];
    // Past the palette (tune_bench plots 9 logs), colours repeat: a dash tells them apart.
    const size_t cycle = i / std::size(kColours);
    const std::string dash = cycle == 0   ? ""
                             : cycle == 1 ? " stroke-dasharray=\"8 4\""
                                          : " stroke-dasharray=\"2 3\"";
    if (!b.empty()) {
      out << "<polyline fill=\"none\" stroke=\"" << colour << "\"" << dash
          << " stroke-width=\"2\" stroke-linejoin=\"round\" points=\"" << num(px(1)) << ','
          << num(py(b[0]));
      for (size_t t = 1; t < b.size(); ++t)
        if (b[t] != b[t - 1])
          out << ' ' << num(px(double(t + 1))) << ',' << num(py(b[t - 1])) << ' '
              << num(px(double(t + 1))) << ',' << num(py(b[t]));
      out << ' ' << num(px(double(b.size()))) << ',' << num(py(b.back())) << "\"/>\n";
    }
    double ly = kPlotHeight + kLegendRow * static_cast<double>(i) + 4;
    out << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(kLeft + 28)
        << "\" y2=\"" << num(ly) << "\" stroke=\"" << colour << "\"" << dash
        << " stroke-width=\"3\"/>\n"
        << "<text x=\"" << num(kLeft + 36) << "\" y=\"" << num(ly + 4) << "\">"
        << escape_xml(curves[i].label) << legend_best(b) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace kiln::tools
