// Small pieces shared by kiln's hand-written SVG charts (tuning curves, the report's layer
// and roofline charts): text escaping, number formatting, "nice" axis ticks, a palette.
// The charts are self-contained SVG: no library, no external fonts or scripts.
#pragma once

#include <string>
#include <vector>

namespace kiln::tools::svg {

// Colours that stay apart for the usual handful of series (and for colour-blind readers).
inline constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                           "#9467bd", "#8c564b", "#e377c2", "#17becf"};
inline constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

std::string escape_xml(const std::string& s);
std::string num(double v);         // a coordinate: one decimal
std::string tick_label(double v);  // a tick value: %g

// A linear axis from 0: `max` is a whole number of `step`s, step 1, 2 or 5 times a power of 10.
struct Axis {
  double max;
  double step;
};
Axis make_axis(double data_max, double min_step);
std::vector<double> ticks(const Axis& a);  // 0, step, 2 step, ..., max

// The document head (XML declaration, <svg> with size and font, a white background, and the
// title centred at the top); close with "</svg>\n".
std::string open_document(double width, double height, const std::string& title);

}  // namespace kiln::tools::svg
