#include "tools/report_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tools/svg.h"

namespace kiln::tools {
namespace {

using svg::escape_xml;
using svg::num;

constexpr const char* kTunedColour = "#2ca02c";
constexpr const char* kFallbackColour = "#9e9e9e";
constexpr const char* kLayoutColour = "#7fb7e6";

bool is_conversion(const ReportLayer& l) { return l.op == "LayoutTransform"; }

const char* layer_colour(const ReportLayer& l) {
  if (is_conversion(l)) return kLayoutColour;
  return l.tuned ? kTunedColour : kFallbackColour;
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double gflops(const ReportLayer& l) { return l.ms > 0 ? l.flops / (l.ms * 1e6) : 0; }

// Powers of ten covering [lo, hi] on a log axis.
std::vector<double> decades(double lo, double hi) {
  std::vector<double> d;
  for (double v = std::pow(10, std::floor(std::log10(lo))); v <= hi * 1.0001; v *= 10)
    d.push_back(v);
  return d;
}

void legend_entry(std::ostringstream& out, double x, double y, const char* colour,
                  const std::string& text) {
  out << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 10) << "\" width=\"14\" height=\"12\" fill=\""
      << colour << "\"/><text x=\"" << num(x + 20) << "\" y=\"" << num(y) << "\">"
      << escape_xml(text) << "</text>\n";
}

}  // namespace

std::string layer_time_svg(const std::vector<ReportLayer>& layers) {
  double max_ms = 0;
  for (const ReportLayer& l : layers) max_ms = std::max(max_ms, l.ms);
  if (!(max_ms > 0)) return "";
  constexpr double kWidth = 900, kLabel = 330, kRight = 90, kTop = 70, kRow = 16;
  const double bar_w = kWidth - kLabel - kRight;
  const double height = kTop + kRow * layers.size() + 50;
  svg::Axis x = svg::make_axis(max_ms, 0);
  std::ostringstream out;
  out << svg::open_document(kWidth, height, "Time per layer (ms)");
  legend_entry(out, kLabel, 50, kTunedColour, "tuned");
  legend_entry(out, kLabel + 90, 50, kFallbackColour, "fallback config");
  legend_entry(out, kLabel + 240, 50, kLayoutColour, "layout conversion");
  out << "<g stroke=\"#e4e4e4\" shape-rendering=\"crispEdges\">\n";
  const double bottom = kTop + kRow * layers.size();
  for (double v : svg::ticks(x))
    out << "<line x1=\"" << num(kLabel + v / x.max * bar_w) << "\" y1=\"" << num(kTop)
        << "\" x2=\"" << num(kLabel + v / x.max * bar_w) << "\" y2=\"" << num(bottom) << "\"/>\n";
  out << "</g>\n<g fill=\"#333\" text-anchor=\"middle\">\n";
  for (double v : svg::ticks(x))
    out << "<text x=\"" << num(kLabel + v / x.max * bar_w) << "\" y=\"" << num(bottom + 16)
        << "\">" << svg::tick_label(v) << "</text>\n";
  out << "</g>\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const ReportLayer& l = layers[i];
    const double y = kTop + kRow * i;
    std::string label = std::to_string(i) + " " + l.op + " " + l.node;
    if (label.size() > 52) label = label.substr(0, 49) + "...";
    out << "<text x=\"" << num(kLabel - 6) << "\" y=\"" << num(y + 12)
        << "\" text-anchor=\"end\" font-size=\"11\">" << escape_xml(label) << "</text>\n";
    if (l.ms < 0) continue;
    const double w = std::max(1.0, l.ms / x.max * bar_w);
    out << "<rect x=\"" << num(kLabel) << "\" y=\"" << num(y + 2) << "\" width=\"" << num(w)
        << "\" height=\"" << num(kRow - 4) << "\" fill=\"" << layer_colour(l) << "\"><title>"
        << escape_xml(l.workload + " | " + l.tpl) << "</title></rect>\n"
        << "<text x=\"" << num(kLabel + w + 4) << "\" y=\"" << num(y + 12)
        << "\" font-size=\"11\" fill=\"#333\">" << fixed(l.ms, 3) << "</text>\n";
  }
  out << "<text x=\"" << num(kLabel + bar_w / 2) << "\" y=\"" << num(bottom + 36)
      << "\" text-anchor=\"middle\">milliseconds (median)</text>\n</svg>\n";
  return out.str();
}

std::string roofline_svg(const std::vector<ReportLayer>& layers, const Roofline& r, int threads) {
  const double peak = r.peak_for(threads), bw = r.bandwidth_for(threads);
  constexpr double kWidth = 800, kHeight = 520, kLeft = 80, kRight = 30, kTop = 50, kBottom = 70;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  // Axis ranges: intensities from 0.01 to 1000 FLOP/byte, rates down to 1/10,000 of peak.
  double x_lo = 0.01, x_hi = 1000, y_hi = std::pow(10, std::ceil(std::log10(peak * 1.5)));
  double y_lo = y_hi / 1e5;
  auto px = [&](double v) {
    return kLeft + (std::log10(v) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo)) * plot_w;
  };
  auto py = [&](double v) {
    v = std::max(v, y_lo);
    return kTop + plot_h - (std::log10(v) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo)) * plot_h;
  };
  std::ostringstream out;
  out << svg::open_document(kWidth, kHeight, "Roofline (" + std::to_string(threads) + " thread" +
                                                 (threads == 1 ? "" : "s") + ")");
  out << "<g stroke=\"#e4e4e4\" shape-rendering=\"crispEdges\">\n";
  for (double v : decades(x_lo, x_hi))
    out << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(px(v))
        << "\" y2=\"" << num(kTop + plot_h) << "\"/>\n";
  for (double v : decades(y_lo, y_hi))
    out << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(py(v)) << "\" x2=\""
        << num(kLeft + plot_w) << "\" y2=\"" << num(py(v)) << "\"/>\n";
  out << "</g>\n<g fill=\"#333\">\n";
  for (double v : decades(x_lo, x_hi))
    out << "<text x=\"" << num(px(v)) << "\" y=\"" << num(kTop + plot_h + 18)
        << "\" text-anchor=\"middle\">" << svg::tick_label(v) << "</text>\n";
  for (double v : decades(y_lo, y_hi))
    out << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(py(v) + 4)
        << "\" text-anchor=\"end\">" << svg::tick_label(v) << "</text>\n";
  out << "</g>\n<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\"" << num(plot_w)
      << "\" height=\"" << num(plot_h) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  // The roof: the bandwidth slope up to the ridge point, then the flat peak.
  const double ridge = peak / bw;
  out << "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"" << num(px(x_lo))
      << ',' << num(py(bw * x_lo)) << ' ' << num(px(std::clamp(ridge, x_lo, x_hi))) << ','
      << num(py(std::min(peak, bw * std::clamp(ridge, x_lo, x_hi)))) << ' ' << num(px(x_hi)) << ','
      << num(py(std::min(peak, bw * x_hi))) << "\"/>\n";
  out << "<text x=\"" << num(kLeft + plot_w - 4) << "\" y=\"" << num(py(peak) - 6)
      << "\" text-anchor=\"end\" fill=\"#d62728\">peak " << fixed(peak, 1) << " GFLOPS, "
      << fixed(bw, 1) << " GB/s</text>\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const ReportLayer& l = layers[i];
    if (!(l.ms > 0) || !(l.flops > 0) || !(l.bytes > 0)) continue;
    const double ai = std::clamp(l.flops / l.bytes, x_lo, x_hi);
    out << "<circle cx=\"" << num(px(ai)) << "\" cy=\"" << num(py(gflops(l)))
        << "\" r=\"4.5\" fill=\"" << layer_colour(l) << "\" fill-opacity=\"0.8\" stroke=\"#333\" "
        << "stroke-width=\"0.6\"><title>" << i << ' ' << escape_xml(l.node) << ": "
        << fixed(gflops(l), 1) << " GFLOPS, " << fixed(l.flops / l.bytes, 2)
        << " FLOP/byte</title></circle>\n";
  }
  out << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kTop + plot_h + 42)
      << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte of arguments)</text>\n"
      << "<text transform=\"translate(22 " << num(kTop + plot_h / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">GFLOPS</text>\n</svg>\n";
  return out.str();
}

std::string report_html(const ReportData& d) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kiln report: "
    << escape_xml(d.model_dir) << "</title>\n<style>\n"
    << "body{font-family:" << svg::kFont << ";margin:24px;color:#222;max-width:1100px}\n"
    << "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px "
       "solid #ddd;text-align:left}td.n{text-align:right}\n"
    << ".fallback{color:#777}.chart{margin:16px 0}\n</style></head><body>\n";
  h << "<h1>kiln report</h1>\n<p>Model <code>" << escape_xml(d.model_dir) << "</code>, target <b>"
    << escape_xml(d.target) << "</b>, " << d.layers.size() << " layers; arena "
    << d.workspace_bytes << " bytes (naive " << d.naive_workspace_bytes << "), params "
    << d.params_bytes << " bytes.</p>\n";
  int tuned = 0, kernels = 0;
  double flops = 0;
  for (const ReportLayer& l : d.layers) {
    if (is_conversion(l)) continue;
    ++kernels;
    tuned += l.tuned;
    flops += l.flops;
  }
  h << "<p>" << tuned << " of " << kernels << " layers use tuned configs; "
    << fixed(flops / 1e9, 3) << " GFLOP per run.";
  if (d.total_ms) {
    h << " Measured: <b>" << fixed(*d.total_ms, 3) << " ms</b> per run on " << d.threads
      << " thread" << (d.threads == 1 ? "" : "s") << " ("
      << fixed(flops / (*d.total_ms * 1e6), 1) << " GFLOPS).";
  }
  h << "</p>\n<p>" << escape_xml(d.timing_note) << "</p>\n";
  if (d.roofline) {
    h << "<p>This machine (" << escape_xml(d.roofline->cpu) << "): peak "
      << fixed(d.roofline->peak_gflops_1t, 1) << " GFLOPS f32 on 1 thread, "
      << fixed(d.roofline->peak_gflops, 1) << " on " << d.roofline->threads << "; read bandwidth "
      << fixed(d.roofline->bandwidth_gbs_1t, 1) << " / " << fixed(d.roofline->bandwidth_gbs, 1)
      << " GB/s.</p>\n";
  }
  std::string times = layer_time_svg(d.layers);
  if (!times.empty()) {
    h << "<h2>Time per layer</h2>\n<div class=\"chart\">" << times << "</div>\n";
    if (d.roofline)
      h << "<h2>Layers against the roofline</h2>\n<div class=\"chart\">"
        << roofline_svg(d.layers, *d.roofline, d.threads) << "</div>\n";
  }
  if (!d.curves.empty()) {
    h << "<h2>Tuning curves</h2>\n<div class=\"chart\">"
      << tuning_curves_svg(d.curves, "Best GFLOPS found per task") << "</div>\n";
  }
  if (!d.batch_ms.empty()) {
    h << "<h2>Latency against batch size</h2>\n<p>The whole model at each batch, timed here "
         "(median of the runs): one artifact for the range, run as its batch classes.</p>\n"
         "<table><tr><th>batch</th><th>ms</th><th>ms per sample</th></tr>\n";
    for (const auto& [batch, ms] : d.batch_ms)
      h << "<tr><td class=\"n\">" << batch << "</td><td class=\"n\">" << fixed(ms, 3)
        << "</td><td class=\"n\">" << fixed(ms / static_cast<double>(batch), 3) << "</td></tr>\n";
    h << "</table>\n";
  }
  if (!d.tuned.empty()) {
    h << "<h2>Tuned kernels</h2>\n<p>The spread is (max - min) / median of the record's times; "
         "the comparison is the rank test of the tune's final re-measurement, where the untuned "
         "config was timed beside the best.</p>\n<table><tr><th>kernel</th><th>template</th>"
         "<th>spread</th><th>against the untuned config</th><th>workload</th></tr>\n";
    for (const TunedKernel& k : d.tuned)
      h << "<tr><td>" << escape_xml(k.kernel) << "</td><td>" << escape_xml(k.tpl)
        << "</td><td class=\"n\">" << fixed(100 * k.spread, 1) << "%</td><td>"
        << escape_xml(k.verdict.empty() ? (k.kept_untuned ? "kept the untuned config" : "-")
                                        : k.verdict)
        << "</td><td><code>" << escape_xml(k.workload) << "</code></td></tr>\n";
    h << "</table>\n";
  }
  if (!d.precisions.empty()) {
    h << "<h2>Precision per layer</h2>\n<p>Each layer's two forms as the records time them "
         "(kiln tune --precisions): the lower precision's kernel (a quantized conv's int8 kernel, "
         "or a layer's bf16/f16 kernel with the casts it reads) against f32 (the float path with "
         "its quantize/dequantize, or the f32 kernel); f32 is taken when faster by over 5%, "
         "the rule where the records lack either.</p>\n<table><tr><th>node</th><th>precision"
         "</th><th>ms</th><th>f32 ms</th><th>takes</th></tr>\n";
    auto ms = [](double v) { return v > 0 ? fixed(v, 3) : std::string("-"); };
    for (const PrecisionChoice& c : d.precisions)
      h << "<tr><td>" << escape_xml(c.node) << "</td><td>" << escape_xml(c.low)
        << "</td><td class=\"n\">" << ms(c.low_ms) << "</td><td class=\"n\">" << ms(c.f32_ms)
        << "</td><td>" << escape_xml(c.takes) << "</td></tr>\n";
    h << "</table>\n";
    if (!d.error_budget.empty()) h << "<p>" << escape_xml(d.error_budget) << ".</p>\n";
  }
  h << "<h2>Layers</h2>\n<table><tr><th>#</th><th>node</th><th>op</th><th>template</th>"
       "<th>config</th><th>ms</th><th>GFLOPS</th>";
  if (d.roofline) h << "<th>% of peak</th>";
  h << "<th>workload</th></tr>\n";
  const double peak = d.roofline ? d.roofline->peak_for(d.threads) : 0;
  for (size_t i = 0; i < d.layers.size(); ++i) {
    const ReportLayer& l = d.layers[i];
    h << "<tr" << (l.tuned || is_conversion(l) ? "" : " class=\"fallback\"") << "><td class=\"n\">"
      << i << "</td><td>" << escape_xml(l.node) << "</td><td>" << escape_xml(l.op) << "</td><td>"
      << escape_xml(l.tpl) << "</td><td>" << (l.tuned ? "tuned" : "fallback") << "</td><td class=\"n\">"
      << (l.ms >= 0 ? fixed(l.ms, 3) : "") << "</td><td class=\"n\">"
      << (l.ms > 0 && l.flops > 0 ? fixed(gflops(l), 1) : "") << "</td>";
    if (d.roofline)
      h << "<td class=\"n\">" << (l.ms > 0 && l.flops > 0 ? fixed(100 * gflops(l) / peak, 1) : "")
        << "</td>";
    h << "<td><code>" << escape_xml(l.workload) << "</code></td></tr>\n";
  }
  h << "</table>\n</body></html>\n";
  return h.str();
}

}  // namespace kiln::tools
