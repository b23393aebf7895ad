#include "tools/records_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

namespace kiln::tools {
namespace {

// Plot geometry in SVG user units (pixels when rendered at 1:1).
constexpr double kWidth = 800, kPlotHeight = 440;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 60;
constexpr double kLegendRow = 20;
// Colours that stay apart for the usual handful of logs (and for colour-blind readers).
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `target` intervals over
// [0, max]; at least `min_step` (1 for trial numbers).
double nice_step(double max, int target, double min_step) {
  double raw = max / target;
  double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  return std::max(step, min_step);
}

struct Axis {
  double max;   // the value at the far end of the axis (a whole number of steps)
  double step;  // between ticks
};

// The tick values 0, step, 2 step, ..., max (multiples, so no rounding drift accumulates).
std::vector<double> ticks(const Axis& a) {
  std::vector<double> t;
  for (int k = 0; k * a.step <= a.max * (1 + 1e-9); ++k) t.push_back(k * a.step);
  return t;
}

Axis make_axis(double data_max, double min_step) {
  if (!(data_max > 0)) data_max = 1;
  double step = nice_step(data_max, 6, min_step);
  return {std::ceil(data_max / step - 1e-9) * step, step};
}

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

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << kWidth << ' ' << num(height)
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << num(kWidth / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"17\" "
      << "font-weight=\"bold\">" << escape_xml(title) << "</text>\n";

  // Grid lines and tick labels first, so the curves draw over them.
  svg << "<g stroke=\"#e4e4e4\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n";
  for (double v : ticks(y))
    svg << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(py(v)) << "\" x2=\""
        << num(kLeft + plot_w) << "\" y2=\"" << num(py(v)) << "\"/>\n";
  for (double v : ticks(x))
    svg << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(px(v))
        << "\" y2=\"" << num(kTop + plot_h) << "\"/>\n";
  svg << "</g>\n<g fill=\"#333\">\n";
  for (double v : ticks(y))
    svg << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(py(v) + 4)
        << "\" text-anchor=\"end\">" << tick_label(v) << "</text>\n";
  for (double v : ticks(x))
    svg << "<text x=\"" << num(px(v)) << "\" y=\"" << num(kTop + plot_h + 18)
        << "\" text-anchor=\"middle\">" << tick_label(v) << "</text>\n";
  svg << "</g>\n";
  // The frame with tick marks.
  svg << "<g stroke=\"#333\" stroke-width=\"1\" fill=\"none\" shape-rendering=\"crispEdges\">\n"
      << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\"" << num(plot_w)
      << "\" height=\"" << num(plot_h) << "\"/>\n";
  for (double v : ticks(y))
    svg << "<line x1=\"" << num(kLeft - 4) << "\" y1=\"" << num(py(v)) << "\" x2=\"" << num(kLeft)
        << "\" y2=\"" << num(py(v)) << "\"/>\n";
  for (double v : ticks(x))
    svg << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(kTop + plot_h) << "\" x2=\""
        << num(px(v)) << "\" y2=\"" << num(kTop + plot_h + 4) << "\"/>\n";
  svg << "</g>\n";
  svg << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kTop + plot_h + 42)
      << "\" text-anchor=\"middle\">trial</text>\n"
      << "<text transform=\"translate(22 " << num(kTop + plot_h / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">best GFLOPS so far</text>\n";

  // Each curve as a step line: a best value holds until a later trial beats it.
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::vector<double>& b = curves[i].best_so_far;
    const char* colour = kColours[i % std::size(kColours)];
    if (!b.empty()) {
      svg << "<polyline fill=\"none\" stroke=\"" << colour
          << "\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"" << num(px(1)) << ','
          << num(py(b[0]));
      for (size_t t = 1; t < b.size(); ++t)
        if (b[t] != b[t - 1])
          svg << ' ' << num(px(double(t + 1))) << ',' << num(py(b[t - 1])) << ' '
              << num(px(double(t + 1))) << ',' << num(py(b[t]));
      svg << ' ' << num(px(double(b.size()))) << ',' << num(py(b.back())) << "\"/>\n";
    }
    double ly = kPlotHeight + kLegendRow * static_cast<double>(i) + 4;
    svg << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(kLeft + 28)
        << "\" y2=\"" << num(ly) << "\" stroke=\"" << colour << "\" stroke-width=\"3\"/>\n"
        << "<text x=\"" << num(kLeft + 36) << "\" y=\"" << num(ly + 4) << "\">"
        << escape_xml(curves[i].label) << legend_best(b) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace kiln::tools
