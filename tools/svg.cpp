#include "tools/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::tools::svg {

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
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

namespace {

// A step of 1, 2 or 5 times a power of ten giving about `target` intervals over [0, max];
// at least `min_step` (1 for trial numbers).
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

}  // namespace

Axis make_axis(double data_max, double min_step) {
  if (!(data_max > 0)) data_max = 1;
  double step = nice_step(data_max, 6, min_step);
  return {std::ceil(data_max / step - 1e-9) * step, step};
}

std::vector<double> ticks(const Axis& a) {
  // Multiples of the step, so no rounding drift accumulates.
  std::vector<double> t;
  for (int k = 0; k * a.step <= a.max * (1 + 1e-9); ++k) t.push_back(k * a.step);
  return t;
}

std::string open_document(double width, double height, const std::string& title) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + num(width) + ' ' + num(height) +
         "\" font-family=\"" + kFont + "\" font-size=\"13\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + "<text x=\"" +
         num(width / 2) + "\" y=\"28\" text-anchor=\"middle\" font-size=\"17\" " +
         "font-weight=\"bold\">" + escape_xml(title) + "</text>\n";
}

}  // namespace kiln::tools::svg
