#include "network/blocked_elementwise.h"

#include <algorithm>
#include <string>

#include "schedules/elementwise/elementwise.h"

namespace kiln::network {

namespace {

// Whether every step keeps finite values finite. When the block does not divide C, the
// padded channels (zeros from the conv or the conversion that made the blocks) go through the
// op too, and the next conv multiplies them by its zero-padded weights: a finite value gives
// 0, an infinity or NaN (1/0, log 0) would poison every output channel.
bool keeps_padding_finite(const schedules::Workload& w) {
  static const std::vector<std::string> kUnsafe = {"div", "reciprocal", "log", "sqrt", "pow",
                                                   "exp"};
  std::vector<std::string> steps = w.epilogue;
  steps.push_back(w.op);
  for (const std::string& s : steps)
    if (std::find(kUnsafe.begin(), kUnsafe.end(), s) != kUnsafe.end()) return false;
  return true;
}

}  // namespace

std::optional<BlockedElementwise> blocked_elementwise(const schedules::Workload& w, Layout block) {
  const std::vector<std::string>& ops = schedules::elementwise_ops();
  if (block <= 0 || std::find(ops.begin(), ops.end(), w.op) == ops.end()) return std::nullopt;
  if (w.param_or("rank", 0) != 4 || w.params.count("o0")) return std::nullopt;  // not Expand
  // The operands' rank-4 shapes and the output's.
  std::vector<std::vector<int64_t>> operands;
  for (char name = 'a'; w.params.count(std::string(1, name) + "0"); ++name) {
    std::vector<int64_t> d;
    for (int i = 0; i < 4; ++i) d.push_back(w.param(std::string(1, name) + std::to_string(i)));
    operands.push_back(d);
  }
  std::vector<int64_t> out(4, 1);
  for (const auto& d : operands)
    for (int i = 0; i < 4; ++i) out[i] = std::max(out[i], d[i]);
  const int64_t n = out[0], c = out[1], h = out[2], wd = out[3];
  if (c % block != 0 && !keeps_padding_finite(w)) return std::nullopt;
  const int64_t blocks = (c + block - 1) / block;
  BlockedElementwise r{w, {}};
  r.workload.params = w.params;
  r.workload.params["rank"] = 5;
  for (size_t o = 0; o < operands.size(); ++o) {
    const std::vector<int64_t>& d = operands[o];
    const bool per_image = d[1] == 1 && d[2] == 1 && d[3] == 1;
    BlockedOperandKind kind;
    std::vector<int64_t> shape;
    if (d == out) {
      kind = BlockedOperandKind::Full, shape = {n, blocks, h, wd, block};
    } else if (!per_image && d[1] == c && d[2] == 1 && d[3] == 1) {
      kind = BlockedOperandKind::PerChannel, shape = {d[0], blocks, 1, 1, block};
    } else if (per_image) {
      kind = BlockedOperandKind::PerImage, shape = {d[0], 1, 1, 1, 1};
    } else {
      return std::nullopt;  // e.g. a [1,1,H,W] map: its blocked form is not a broadcast
    }
    const std::string name(1, static_cast<char>('a' + o));
    for (int i = 0; i < 5; ++i) r.workload.params[name + std::to_string(i)] = shape[i];
    r.kinds.push_back(kind);
  }
  return r;
}

}  // namespace kiln::network
