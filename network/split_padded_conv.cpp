#include "network/split_padded_conv.h"

#include <algorithm>

#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/graph/rewrites/prune_dead_taps.h"

namespace kiln::network {

using graph::Graph;
using graph::HostTensor;
using graph::Node;

namespace {

// Output positions [first, end) of one axis whose live taps are [lo, hi].
struct Band {
  int64_t first, end, lo, hi;
};

// The bands of an axis of `size` pixels, `taps` taps of `dilation`, `before` padding first
// and `out` outputs (stride 1); empty when some output reads padding only.
std::vector<Band> bands(int64_t size, int64_t taps, int64_t dilation, int64_t before, int64_t out) {
  std::vector<Band> b;
  for (int64_t y = 0; y < out; ++y) {
    int64_t lo = 0, hi = taps - 1;
    while (lo < taps && y + lo * dilation - before < 0) ++lo;
    while (hi >= 0 && y + hi * dilation - before >= size) --hi;
    if (lo > hi) return {};
    if (!b.empty() && b.back().lo == lo && b.back().hi == hi) {
      b.back().end = y + 1;
      continue;
    }
    b.push_back({y, y + 1, lo, hi});
  }
  return b;
}

// A conv's time in multiply-adds, where streaming its weights from memory counts too: a core
// does about 20 f32 multiply-adds in the time it reads one weight from memory (75 G per
// second against 15 GB/s here; DeepLabV3's split ASPP corners read 2.9 G weights a second).
// A region of a few output pixels is bound by its weights, and every region reads the
// weights of its taps again.
double conv_cost(int64_t pixels, int64_t taps, int64_t channels_in_out) {
  const double macs = double(pixels) * double(taps) * double(channels_in_out);
  const double weights = double(taps) * double(channels_in_out);
  return std::max(macs, 20.0 * weights);
}

class Splitter {
 public:
  explicit Splitter(Graph& g) : g_(g) {}

  // The nodes that replace `conv`, or nothing when it is not split.
  std::optional<std::vector<Node>> split(const Node& conv) {
    if (conv.op_type != "Conv" || !conv.has_input(1) || !g_.is_constant(conv.inputs[1]))
      return std::nullopt;
    if (conv.has_input(2) && !g_.is_constant(conv.inputs[2])) return std::nullopt;
    if (conv.attr_string("auto_pad", "NOTSET") != "NOTSET" || conv.attr_int("group", 1) != 1)
      return std::nullopt;
    for (const Node& e : conv.epilogue)
      if (!e.inputs.empty()) return std::nullopt;  // a residual or any step with an operand
    const std::optional<graph::ValueType> in = g_.type_of(conv.inputs[0]);
    const std::optional<graph::ValueType> out = g_.type_of(conv.outputs[0]);
    const HostTensor& w = g_.initializers.at(conv.inputs[1]);
    if (!in || !in->is_concrete() || !out || !out->is_concrete() || in->dims().size() != 4 ||
        w.shape().size() != 4 || w.dtype() != graph::DataType::f32() ||
        in->dtype != graph::DataType::f32())
      return std::nullopt;
    const std::vector<int64_t> x = in->dims(), y = out->dims(), k = w.shape();
    const std::vector<int64_t> strides = conv.attr_ints("strides", {1, 1});
    const std::vector<int64_t> dil = conv.attr_ints("dilations", {1, 1});
    const std::vector<int64_t> pads = conv.attr_ints("pads", {0, 0, 0, 0});
    if (strides != std::vector<int64_t>{1, 1} || dil.size() != 2 || pads.size() != 4)
      return std::nullopt;
    const std::vector<Band> rows = bands(x[2], k[2], dil[0], pads[0], y[2]);
    const std::vector<Band> cols = bands(x[3], k[3], dil[1], pads[1], y[3]);
    if (rows.empty() || cols.empty() || rows.size() > 5 || cols.size() > 5) return std::nullopt;
    // Split where the regions cost at most half the whole conv.
    const int64_t io = k[0] * k[1];
    double regions = 0;
    for (const Band& r : rows)
      for (const Band& c : cols)
        regions += conv_cost((r.end - r.first) * (c.end - c.first),
                             (r.hi - r.lo + 1) * (c.hi - c.lo + 1), io);
    if (regions > 0.5 * conv_cost(y[2] * y[3], k[2] * k[3], io)) return std::nullopt;

    std::vector<Node> nodes;
    const std::string base = conv.name.empty() ? conv.outputs[0] : conv.name;
    std::vector<std::string> row_values;
    for (size_t r = 0; r < rows.size(); ++r) {
      std::vector<std::string> parts;
      for (size_t c = 0; c < cols.size(); ++c) {
        const std::string id = base + "/region" + std::to_string(r) + std::to_string(c);
        const Band &rb = rows[r], &cb = cols[c];
        // The input rows and columns the band's live taps read.
        const int64_t r0 = rb.first + rb.lo * dil[0] - pads[0],
                      r1 = rb.end - 1 + rb.hi * dil[0] - pads[0] + 1;
        const int64_t c0 = cb.first + cb.lo * dil[1] - pads[1],
                      c1 = cb.end - 1 + cb.hi * dil[1] - pads[1] + 1;
        Node slice;
        slice.name = id + "/slice";
        slice.op_type = "Slice";
        slice.inputs = {conv.inputs[0],
                        g_.add_constant(id + ".starts", HostTensor::i64_vector({r0, c0})),
                        g_.add_constant(id + ".ends", HostTensor::i64_vector({r1, c1})),
                        g_.add_constant(id + ".axes", HostTensor::i64_vector({2, 3}))};
        slice.outputs = {id + "/in"};
        slice.source_index = conv.source_index;
        g_.types[slice.outputs[0]] =
            graph::ValueType::of(in->dtype, {x[0], x[1], r1 - r0, c1 - c0});
        Node part = conv;
        part.name = id;
        part.inputs[0] = slice.outputs[0];
        part.inputs[1] =
            g_.add_constant(id + ".w", graph::crop_conv_taps(w, rb.lo, rb.hi, cb.lo, cb.hi));
        part.outputs = {id + "/out"};
        part.attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
        part.attrs["kernel_shape"] = std::vector<int64_t>{rb.hi - rb.lo + 1, cb.hi - cb.lo + 1};
        g_.types[part.outputs[0]] =
            graph::ValueType::of(out->dtype, {y[0], y[1], rb.end - rb.first, cb.end - cb.first});
        nodes.push_back(std::move(slice));
        nodes.push_back(std::move(part));
        parts.push_back(nodes.back().outputs[0]);
      }
      row_values.push_back(concat(nodes, parts, 3, base + "/row" + std::to_string(r), conv));
    }
    // The last Concat writes the conv's own output.
    const std::string whole = concat(nodes, row_values, 2, conv.outputs[0], conv);
    if (whole != conv.outputs[0]) nodes.back().outputs[0] = conv.outputs[0];
    return nodes;
  }

 private:
  // `parts` concatenated along `axis` into `name` (the one part itself when there is one).
  std::string concat(std::vector<Node>& nodes, const std::vector<std::string>& parts, int64_t axis,
                     const std::string& name, const Node& conv) {
    if (parts.size() == 1) return parts.front();
    std::vector<int64_t> d = g_.type_of(parts.front())->dims();
    for (size_t i = 1; i < parts.size(); ++i) d[axis] += g_.type_of(parts[i])->dims()[axis];
    Node cat;
    cat.name = name + "/concat";
    cat.op_type = "Concat";
    cat.inputs = parts;
    cat.outputs = {name};
    cat.attrs["axis"] = axis;
    cat.source_index = conv.source_index;
    g_.types[name] = graph::ValueType::of(g_.type_of(parts.front())->dtype, d);
    nodes.push_back(std::move(cat));
    return name;
  }

  Graph& g_;
};

}  // namespace

int split_padded_convs(Graph& g) {
  Splitter splitter(g);
  std::vector<Node> nodes;
  int split = 0;
  for (Node& n : g.nodes) {
    std::optional<std::vector<Node>> parts = splitter.split(n);
    if (!parts) {
      nodes.push_back(std::move(n));
      continue;
    }
    for (Node& p : *parts) nodes.push_back(std::move(p));
    ++split;
  }
  g.nodes = std::move(nodes);
  if (split > 0) graph::erase_unread_initializers(g);  // the whole weights
  return split;
}

}  // namespace kiln::network
