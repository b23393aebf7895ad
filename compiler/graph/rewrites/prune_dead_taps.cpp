#include "compiler/graph/rewrites/prune_dead_taps.h"

#include <optional>

#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::graph {


namespace {

// The taps of one spatial axis that read a pixel for some output position: [first, last].
struct LiveTaps {
  int64_t first = 0, last = 0;
};

// Along an axis of `size` with `taps` taps, stride, dilation and the pad before and after:
// the live range, or nothing when every tap reads padding only (then the conv is its bias).
std::optional<LiveTaps> live_taps(int64_t size, int64_t taps, int64_t stride, int64_t dilation,
                                  int64_t before, int64_t after) {
  const int64_t out = (size + before + after - ((taps - 1) * dilation + 1)) / stride + 1;
  std::optional<LiveTaps> live;
  for (int64_t k = 0; k < taps; ++k)
    for (int64_t y = 0; y < out; ++y) {
      const int64_t at = y * stride + k * dilation - before;
      if (at < 0 || at >= size) continue;
      if (!live) live = LiveTaps{k, k};
      live->last = k;
      break;
    }
  return live;
}

bool prune(Graph& g, Node& conv) {
  if (conv.op_type != "Conv" || !conv.has_input(1) || !g.is_constant(conv.inputs[1])) return false;
  if (conv.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  const std::optional<graph::ValueType> in = g.type_of(conv.inputs[0]);
  const HostTensor& w = g.initializers.at(conv.inputs[1]);
  if (!in || !in->is_concrete() || in->dims().size() != 4 || w.shape().size() != 4) return false;
  const std::vector<int64_t> x = in->dims(), k = w.shape();
  const std::vector<int64_t> strides = conv.attr_ints("strides", {1, 1});
  const std::vector<int64_t> dilations = conv.attr_ints("dilations", {1, 1});
  std::vector<int64_t> pads = conv.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) return false;
  std::optional<LiveTaps> rows = live_taps(x[2], k[2], strides[0], dilations[0], pads[0], pads[2]);
  std::optional<LiveTaps> cols = live_taps(x[3], k[3], strides[1], dilations[1], pads[1], pads[3]);
  if (!rows || !cols) return false;
  if (rows->first == 0 && rows->last == k[2] - 1 && cols->first == 0 && cols->last == k[3] - 1)
    return false;
  // Pads shrink by the span of the taps dropped on each side (the output size is unchanged).
  std::vector<int64_t> cut = {pads[0] - rows->first * dilations[0],
                              pads[1] - cols->first * dilations[1],
                              pads[2] - (k[2] - 1 - rows->last) * dilations[0],
                              pads[3] - (k[3] - 1 - cols->last) * dilations[1]};
  for (int64_t p : cut)
    if (p < 0) return false;  // a live tap that also reaches past the far side: keep the conv
  const std::string weight =
      g.add_constant(conv.inputs[1] + ".live_taps",
                     crop_conv_taps(w, rows->first, rows->last, cols->first, cols->last));
  conv.inputs[1] = weight;
  conv.attrs["pads"] = cut;
  const int64_t kh = rows->last - rows->first + 1, kw = cols->last - cols->first + 1;
  conv.attrs["kernel_shape"] = std::vector<int64_t>{kh, kw};
  if (kh == 1 && kw == 1) conv.attrs["dilations"] = std::vector<int64_t>{1, 1};
  return true;
}

}  // namespace

HostTensor crop_conv_taps(const HostTensor& w, int64_t row_first, int64_t row_last,
                          int64_t col_first, int64_t col_last) {
  const std::vector<int64_t> s = w.shape();
  const int64_t kh = row_last - row_first + 1, kw = col_last - col_first + 1;
  std::vector<double> v;
  v.reserve(static_cast<size_t>(s[0] * s[1] * kh * kw));
  for (int64_t oc = 0; oc < s[0] * s[1]; ++oc)
    for (int64_t y = row_first; y <= row_last; ++y)
      for (int64_t x = col_first; x <= col_last; ++x)
        v.push_back(w.f64_at((oc * s[2] + y) * s[3] + x));
  return HostTensor::from_f64(w.dtype(), {s[0], s[1], kh, kw}, v);
}

int prune_dead_taps(Graph& g) {
  int pruned = 0;
  for (Node& n : g.nodes) pruned += prune(g, n);
  if (pruned > 0) erase_unread_initializers(g);  // weights replaced by cropped copies
  return pruned;
}

}  // namespace kiln::graph
