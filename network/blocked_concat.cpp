#include "network/blocked_concat.h"

namespace kiln::network {

std::optional<schedules::Workload> blocked_concat(const schedules::Workload& w, Layout block) {
  if (w.op != "concat" || block <= 0 || w.param("ndim") != 4 || w.param("axis") != 1)
    return std::nullopt;
  const int64_t inputs = w.param("inputs");
  schedules::Workload b = w;
  b.params["ndim"] = 5;
  b.params["D4"] = block;
  for (int64_t k = 0; k < inputs; ++k) {
    const std::string e = "E" + std::to_string(k);
    if (w.param(e) % block != 0) return std::nullopt;
    b.params[e] = w.param(e) / block;
  }
  return b;
}

}  // namespace kiln::network
