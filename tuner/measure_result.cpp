#include "tuner/measure_result.h"

#include <algorithm>
#include <limits>

namespace kiln::tuner {
namespace {

struct KindName {
  MeasureErrorKind kind;
  const char* name;
};

// One table for both directions, in declaration order.
constexpr KindName kKindNames[] = {
    {MeasureErrorKind::Ok, "ok"},
    {MeasureErrorKind::InstantiationError, "instantiation"},
    {MeasureErrorKind::CompileError, "compile"},
    {MeasureErrorKind::CompileTimeout, "compile_timeout"},
    {MeasureErrorKind::RuntimeError, "runtime"},
    {MeasureErrorKind::RunTimeout, "run_timeout"},
    {MeasureErrorKind::WrongResult, "wrong_result"},
    {MeasureErrorKind::WorkerLost, "worker_lost"},
    {MeasureErrorKind::Cancelled, "cancelled"},
    {MeasureErrorKind::InvalidJob, "invalid_job"},
};

}  // namespace

const std::vector<MeasureErrorKind>& all_measure_error_kinds() {
  static const std::vector<MeasureErrorKind> kinds = [] {
    std::vector<MeasureErrorKind> v;
    for (const KindName& k : kKindNames) v.push_back(k.kind);
    return v;
  }();
  return kinds;
}

const char* measure_error_name(MeasureErrorKind kind) {
  for (const KindName& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "unknown";
}

std::optional<MeasureErrorKind> measure_error_from_name(std::string_view name) {
  for (const KindName& k : kKindNames)
    if (name == k.name) return k.kind;
  return std::nullopt;
}

double MeasureResult::cost() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  return *std::min_element(costs.begin(), costs.end());
}

double MeasureResult::median_cost() const {
  if (costs.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double MeasureResult::spread() const {
  if (costs.size() < 2) return 0;
  auto [lo, hi] = std::minmax_element(costs.begin(), costs.end());
  double median = median_cost();
  return median > 0 ? (*hi - *lo) / median : 0;
}

std::string MeasuredOn::cpu() const {
  if (!known()) return "unknown CPU";
  const std::string cpu = vendor + " " + model;
  return emulator.empty() ? cpu : emulator + " on " + cpu;
}

}  // namespace kiln::tuner
