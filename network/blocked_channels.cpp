#include "network/blocked_channels.h"

#include "compiler/base/error.h"
#include "schedules/data_movement/channel_shuffle.h"

namespace kiln::network {

std::optional<schedules::Workload> blocked_channel_shuffle(const schedules::Workload& w,
                                                           const std::vector<Layout>& held,
                                                           Layout block) {
  if (w.op != "channel_shuffle" || block <= 1 ||
      static_cast<int64_t>(held.size()) != w.param("inputs"))
    return std::nullopt;
  schedules::Workload b = w;
  b.params["block"] = block;
  for (size_t i = 0; i < held.size(); ++i)
    b.params["B" + std::to_string(i)] = held[i] > 0 ? held[i] : block;
  try {
    if (schedules::channel_shuffle_interleaves(b)) return b;
  } catch (const UserError&) {
    // channels that do not divide into the block: the NCHW shuffle
  }
  return std::nullopt;
}

std::optional<schedules::Workload> blocked_channel_slice(const schedules::Workload& w,
                                                         const std::vector<int64_t>& x,
                                                         const std::vector<int64_t>& y,
                                                         Layout block) {
  if (w.op != "slice" || block <= 1 || x.size() != 4 || y.size() != 4) return std::nullopt;
  if (x[0] != y[0] || x[2] != y[2] || x[3] != y[3] || x[1] % block != 0 || y[1] % block != 0)
    return std::nullopt;
  // map_slice merges what is taken whole: the slice is [N,] C*H*W with one run of C'*H*W.
  const int64_t plane = x[2] * x[3], n = w.param("ndim"), last = n - 1;
  if (n != (x[0] > 1 ? 2 : 1)) return std::nullopt;
  if (n == 2 && (w.param("D0") != x[0] || w.param("S0") != 0 || w.param("O0") != x[0]))
    return std::nullopt;
  const std::string d = std::to_string(last);
  if (w.param("D" + d) != x[1] * plane || w.param("T" + d) != 1 ||
      w.param("O" + d) != y[1] * plane || w.param("S" + d) % (block * plane) != 0)
    return std::nullopt;
  schedules::Workload b = w;
  b.params["block"] = block;
  return b;
}

}  // namespace kiln::network
