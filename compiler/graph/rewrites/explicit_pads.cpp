#include "compiler/graph/rewrites/explicit_pads.h"

#include <algorithm>

namespace kiln::graph {


namespace {

// ONNX's SAME padding of one axis: the output is ceil(in / stride), the total pad what that
// needs, the odd one after (SAME_UPPER) or before (SAME_LOWER).
std::pair<int64_t, int64_t> same_pads(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                      bool upper) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + (kernel - 1) * dilation + 1 - in, 0);
  const int64_t small = total / 2, large = total - small;
  return upper ? std::pair{small, large} : std::pair{large, small};
}

// The node's pads as [top, left, bottom, right] (auto_pad resolved); false when they cannot
// be known here (no concrete shapes, an unknown auto_pad).
bool resolved_pads(const Graph& g, const Node& n, const std::vector<int64_t>& x,
                   std::vector<int64_t>& pads) {
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    pads = n.attr_ints("pads", {0, 0, 0, 0});
    return pads.size() == 4;
  }
  pads = {0, 0, 0, 0};
  if (auto_pad == "VALID") return true;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return false;
  std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
  if (kernel.empty() && n.op_type == "Conv") {
    std::optional<ValueType> w = g.type_of(n.inputs[1]);
    if (!w || !w->is_concrete() || w->dims().size() != 4) return false;
    kernel = {w->dims()[2], w->dims()[3]};
  }
  const std::vector<int64_t> strides = n.attr_ints("strides", {1, 1});
  const std::vector<int64_t> dilations = n.attr_ints("dilations", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2) return false;
  for (int a = 0; a < 2; ++a) {
    auto [before, after] =
        same_pads(x[2 + a], kernel[a], strides[a], dilations[a], auto_pad == "SAME_UPPER");
    pads[a] = before, pads[2 + a] = after;
  }
  return true;
}

}  // namespace

int explicit_pads(Graph& g) {
  int rewritten = 0;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const bool conv = n.op_type == "Conv", max_pool = n.op_type == "MaxPool";
    const bool avg_pool = n.op_type == "AveragePool";
    std::optional<ValueType> t = n.inputs.empty() ? std::nullopt : g.type_of(n.inputs[0]);
    std::vector<int64_t> pads;
    if (!(conv || max_pool || avg_pool) || !t || !t->is_concrete() || t->dims().size() != 4 ||
        !resolved_pads(g, n, t->dims(), pads)) {
      out.push_back(std::move(n));
      continue;
    }
    const bool was_auto = n.attr_string("auto_pad", "NOTSET") != "NOTSET";
    const bool symmetric = pads[0] == pads[2] && pads[1] == pads[3];
    const bool zero_pad_ok = conv || (avg_pool && n.attr_int("count_include_pad", 0) == 1);
    if (symmetric || (!zero_pad_ok && !max_pool)) {
      if (was_auto && symmetric) {
        n.attrs["pads"] = pads;
        n.attrs.erase("auto_pad");
        ++rewritten;
      }
      out.push_back(std::move(n));
      continue;
    }
    // The shared part stays on the node; the excess goes to a Pad before it.
    const std::vector<int64_t> x = t->dims();
    const int64_t h = std::min(pads[0], pads[2]), w = std::min(pads[1], pads[3]);
    const std::vector<int64_t> excess = {0, 0, pads[0] - h, pads[1] - w,
                                         0, 0, pads[2] - h, pads[3] - w};
    Node pad;
    pad.name = n.name + "/explicit_pad";
    pad.op_type = "Pad";
    pad.source_index = n.source_index;
    const std::string padded = g.unique_name(n.inputs[0] + ".padded");
    pad.inputs = {n.inputs[0], g.add_constant(padded + ".pads", HostTensor::i64_vector(excess)),
                  g.add_constant(padded + ".value",
                                 HostTensor::from_f64(t->dtype, {}, {max_pool ? -1e15 : 0.0}))};
    pad.outputs = {padded};
    g.types[padded] = ValueType::of(
        t->dtype, {x[0], x[1], x[2] + excess[2] + excess[6], x[3] + excess[3] + excess[7]});
    n.inputs[0] = padded;
    n.attrs["pads"] = std::vector<int64_t>{h, w, h, w};
    n.attrs.erase("auto_pad");
    out.push_back(std::move(pad));
    out.push_back(std::move(n));
    ++rewritten;
  }
  g.nodes = std::move(out);
  return rewritten;
}

}  // namespace kiln::graph
