#include "compiler/graph/rewrites/decompose_ops.h"

#include <algorithm>
#include <numeric>

#include "compiler/base/error.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/ops/einsum.h"
#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/graph/rewrites/node_emitter.h"

namespace kiln::graph {


namespace {

class Decomposer {
 public:
  Decomposer(Graph& g, const Node& n, std::vector<Node>& out, int64_t max_concat_inputs)
      : g_(g), n_(n), e_(g, n, out, max_concat_inputs) {}

  // Emits the node's replacement; false (and nothing emitted) when it needs none.
  bool run() {
    const std::string& op = n_.op_type;
    if (op == "Softmax" || op == "LogSoftmax") return softmax(op == "LogSoftmax");
    if (op == "LRN") return lrn();
    if (op == "DepthToSpace" || op == "SpaceToDepth") return depth_space(op == "DepthToSpace");
    if (op == "Tile") return tile();
    if (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum")
      return reduce_of_map();
    if (op == "ReduceLogSumExp") return reduce_log_sum_exp();
    if (op == "Sum" || op == "Mean") return sum_or_mean(op == "Mean");
    if (op == "Einsum") return einsum();
    if (op == "AveragePool" || op == "MaxPool") return pool_3d_over_depth();
    if (op == "ConvTranspose") return patch_conv_transpose();
    if (op == "GatherElements" || op == "GatherND" || op == "ScatterElements" || op == "ScatterND")
      return indexed_copy(op.rfind("Scatter", 0) == 0);
    return false;
  }

 private:
  std::vector<int64_t> dims(const std::string& v) const { return g_.type_of(v)->dims(); }
  const std::string& output() const { return n_.outputs[0]; }
  int64_t rank() const { return static_cast<int64_t>(dims(n_.inputs[0]).size()); }

  bool softmax(bool log) {
    const std::vector<int64_t> x = dims(n_.inputs[0]);
    const int64_t r = static_cast<int64_t>(x.size());
    int64_t axis = n_.attr_int("axis", g_.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += r;
    user_check(axis >= 0 && axis < r) << g_.describe(n_) << ": axis out of range for rank " << r;
    const bool flatten = n_.attr_int("coerce_to_2d", 0) != 0 && axis < r - 1;
    if (!log && (axis == r - 1 || r == 0)) return false;  // the softmax kernel's own form
    if (flatten) {
      // opset < 13: over the axes from `axis` on, flattened.
      const int64_t outer =
          std::accumulate(x.begin(), x.begin() + axis, int64_t{1}, std::multiplies<>());
      const std::string rows = e_.reshape(n_.inputs[0], {outer, -1});
      e_.reshape(over_last_axis(rows, 2, log), x, output());
    } else if (axis == r - 1) {
      over_last_axis(n_.inputs[0], r, log, output());
    } else {
      std::vector<int64_t> perm(r);
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[axis], perm[r - 1]);  // its own inverse
      const std::string moved = e_.transpose(n_.inputs[0], perm);
      e_.transpose(over_last_axis(moved, r, log), perm, output());
    }
    return true;
  }

  // Softmax or LogSoftmax over the last axis of v (rank r).
  std::string over_last_axis(const std::string& v, int64_t r, bool log,
                             const std::string& out = "") {
    if (!log) return e_.emit("Softmax", {v}, {{"axis", r - 1}}, out);
    const std::string last = e_.ints({r - 1});
    const std::map<std::string, graph::AttrValue> keep = {{"keepdims", int64_t{1}}};
    const std::string shifted = e_.emit("Sub", {v, e_.emit("ReduceMax", {v, last}, keep)});
    const std::string sum = e_.emit("ReduceSum", {e_.emit("Exp", {shifted}), last}, keep);
    return e_.emit("Sub", {shifted, e_.emit("Log", {sum})}, {}, out);
  }

  bool lrn() {
    const std::vector<int64_t> x = dims(n_.inputs[0]);
    user_check(x.size() >= 2) << g_.describe(n_) << ": LRN needs [N, C, ...], got rank "
                              << x.size();
    const int64_t size = n_.attr_int("size", 0);
    user_check(size > 0) << g_.describe(n_) << ": LRN size must be positive, got " << size;
    const double alpha = n_.attr_float("alpha", 1e-4f), beta = n_.attr_float("beta", 0.75f),
                 bias = n_.attr_float("bias", 1.0f);
    const int64_t spatial =
        std::accumulate(x.begin() + 2, x.end(), int64_t{1}, std::multiplies<>());
    // Channel c sums squares over [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)].
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    const std::string& v = n_.inputs[0];
    const std::string squares = e_.reshape(e_.emit("Mul", {v, v}), {x[0], 1, x[1], spatial});
    const std::string mean = e_.emit("AveragePool", {squares},
                                     {{"kernel_shape", std::vector<int64_t>{size, 1}},
                                      {"pads", std::vector<int64_t>{before, 0, after, 0}},
                                      {"count_include_pad", int64_t{1}}});
    // bias + alpha / size * sum = bias + alpha * mean
    const std::string scaled =
        e_.emit("Add", {e_.emit("Mul", {e_.reshape(mean, x), e_.scalar(alpha)}), e_.scalar(bias)});
    e_.emit("Div", {v, e_.emit("Pow", {scaled, e_.scalar(beta)})}, {}, output());
    return true;
  }

  bool depth_space(bool to_space) {
    const std::vector<int64_t> x = dims(n_.inputs[0]);
    const int64_t b = n_.attr_int("blocksize", 0);
    user_check(x.size() == 4 && b > 0)
        << g_.describe(n_) << ": needs a 4-D input and a positive blocksize";
    const int64_t N = x[0], C = x[1], H = x[2], W = x[3];
    std::vector<int64_t> split, perm;
    if (to_space) {
      user_check(C % (b * b) == 0)
          << g_.describe(n_) << ": " << C << " channels are not a multiple of blocksize^2";
      if (n_.attr_string("mode", "DCR") == "CRD") {
        split = {N, C / (b * b), b, b, H, W}, perm = {0, 1, 4, 2, 5, 3};
      } else {
        split = {N, b, b, C / (b * b), H, W}, perm = {0, 3, 4, 1, 5, 2};
      }
      e_.reshape(e_.transpose(e_.reshape(n_.inputs[0], split), perm), dims(output()), output());
    } else {
      user_check(H % b == 0 && W % b == 0)
          << g_.describe(n_) << ": " << H << "x" << W << " is not a multiple of the blocksize";
      split = {N, C, H / b, b, W / b, b}, perm = {0, 3, 5, 1, 2, 4};
      e_.reshape(e_.transpose(e_.reshape(n_.inputs[0], split), perm), dims(output()), output());
    }
    return true;
  }

  bool tile() {
    user_check(g_.is_constant(n_.inputs[1])) << g_.describe(n_) << ": repeats must be a constant";
    const std::vector<int64_t> repeats = g_.initializers.at(n_.inputs[1]).to_i64();
    const std::vector<int64_t> x = dims(n_.inputs[0]);
    // [d0, d1] tiled [r0, r1]: [1, d0, 1, d1] expanded to [r0, d0, r1, d1], then merged.
    std::vector<int64_t> spread, expanded;
    for (size_t i = 0; i < x.size(); ++i) {
      if (repeats[i] != 1) spread.push_back(1), expanded.push_back(repeats[i]);
      spread.push_back(x[i]), expanded.push_back(x[i]);
    }
    const std::string wide =
        e_.emit("Expand", {e_.reshape(n_.inputs[0], spread), e_.ints(expanded)});
    e_.reshape(wide, dims(output()), output());
    return true;
  }

  // The reduction of an elementwise map, or an elementwise step after a ReduceSum.
  bool reduce_of_map() {
    const std::string& op = n_.op_type;
    const std::string& v = n_.inputs[0];
    std::string mapped = v;
    if (op == "ReduceL1") mapped = e_.emit("Abs", {v});
    if (op == "ReduceL2" || op == "ReduceSumSquare") mapped = e_.emit("Mul", {v, v});
    const bool after = op == "ReduceL2" || op == "ReduceLogSum";
    const std::string sum = reduce("ReduceSum", mapped, n_.attrs, after ? "" : output());
    if (after) e_.emit(op == "ReduceL2" ? "Sqrt" : "Log", {sum}, {}, output());
    return true;
  }

  bool reduce_log_sum_exp() {
    // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum: no overflow.
    auto keep = n_.attrs;
    keep["keepdims"] = int64_t{1};
    const std::string& v = n_.inputs[0];
    const std::string m = reduce("ReduceMax", v, keep);
    const std::string sum = reduce("ReduceSum", e_.emit("Exp", {e_.emit("Sub", {v, m})}), keep);
    const std::string kept = e_.emit("Add", {e_.emit("Log", {sum}), m});
    e_.reshape(kept, dims(output()), output());
    return true;
  }

  // `op` over the node's axes (its second input, when given) with `attrs`.
  std::string reduce(const std::string& op, const std::string& v,
                     const std::map<std::string, graph::AttrValue>& attrs,
                     const std::string& out = "") {
    std::vector<std::string> inputs = {v};
    if (n_.has_input(1)) inputs.push_back(n_.inputs[1]);
    return e_.emit(op, inputs, attrs, out);
  }

  bool sum_or_mean(bool mean) {
    const std::vector<std::string>& in = n_.inputs;
    if (in.size() == 1) {
      e_.reshape(in[0], dims(output()), output());  // a copy
      return true;
    }
    std::string acc = in[0];
    for (size_t k = 1; k < in.size(); ++k)
      acc = e_.emit("Add", {acc, in[k]}, {}, k + 1 == in.size() && !mean ? output() : "");
    if (mean) e_.emit("Div", {acc, e_.scalar(static_cast<double>(in.size()))}, {}, output());
    return true;
  }

  // A 3-D pool whose window spans one element of H and W (PyTorch exports LocalResponseNorm
  // as an AveragePool of x^2 over [N, 1, C, H, W] with a (size, 1, 1) window) is the 2-D pool
  // of [N, C, D, H x W] with a (size, 1) window.
  bool pool_3d_over_depth() {
    const std::vector<int64_t> x = dims(n_.inputs[0]);
    if (x.size() != 5 || n_.has_output(1) || n_.attr_string("auto_pad", "NOTSET") != "NOTSET")
      return false;
    const std::vector<int64_t> k = n_.attr_ints("kernel_shape");
    const std::vector<int64_t> strides = n_.attr_ints("strides", {1, 1, 1});
    const std::vector<int64_t> pads = n_.attr_ints("pads", {0, 0, 0, 0, 0, 0});
    const std::vector<int64_t> dilations = n_.attr_ints("dilations", {1, 1, 1});
    if (k.size() != 3 || strides.size() != 3 || pads.size() != 6 || dilations.size() != 3)
      return false;
    for (int i : {1, 2})
      if (k[i] != 1 || strides[i] != 1 || pads[i] != 0 || pads[i + 3] != 0 || dilations[i] != 1)
        return false;
    std::map<std::string, graph::AttrValue> attrs = n_.attrs;
    attrs["kernel_shape"] = std::vector<int64_t>{k[0], 1};
    attrs["strides"] = std::vector<int64_t>{strides[0], 1};
    attrs["pads"] = std::vector<int64_t>{pads[0], 0, pads[3], 0};
    if (n_.has_attr("dilations")) attrs["dilations"] = std::vector<int64_t>{dilations[0], 1};
    const std::string flat = e_.reshape(n_.inputs[0], {x[0], x[1], x[2], x[3] * x[4]});
    e_.reshape(e_.emit(n_.op_type, {flat}, attrs), dims(output()), output());
    return true;
  }

  // Einsum of one or two operands, each letter once per operand (attention's
  // "bqhd,bkhd->bhqk"): letters in both operands and the output are batch dimensions, in both
  // operands only contracted, in one operand and the output free, in one operand only summed
  // first. A = [batch, free_a, contracted] and B = [batch, contracted, free_b] by Transpose
  // and Reshape make it one MatMul, whose [batch, free_a, free_b] result is reshaped and
  // transposed to the output's order. One operand: its sum and transpose.
  bool einsum() {
    const std::string equation = n_.attr_string("equation", "");
    const graph::EinsumEquation eq = graph::parse_einsum(equation, n_.inputs.size());
    user_check(n_.inputs.size() <= 2) << g_.describe(n_) << ": Einsum of " << n_.inputs.size()
                                      << " operands is not supported (one or two)";
    std::map<char, int64_t> size;
    for (size_t k = 0; k < eq.inputs.size(); ++k) {
      const std::string& term = eq.inputs[k];
      const std::vector<int64_t> d = dims(n_.inputs[k]);
      for (size_t i = 0; i < term.size(); ++i) {
        user_check(std::count(term.begin(), term.end(), term[i]) == 1)
            << g_.describe(n_) << ": Einsum '" << equation << "': the diagonal of a repeated "
            << "letter is not supported";
        user_check(!size.count(term[i]) || size[term[i]] == d[i])
            << g_.describe(n_) << ": Einsum letter '" << term[i] << "' has sizes " << size[term[i]]
            << " and " << d[i] << " (broadcasting is not supported)";
        size[term[i]] = d[i];
      }
    }
    const std::string& a = eq.inputs[0];
    const std::string b = eq.inputs.size() == 2 ? eq.inputs[1] : "";
    const std::string& out = eq.output;
    auto has = [](const std::string& s, char ch) { return s.find(ch) != std::string::npos; };
    std::string batch, free_a, free_b, contracted, summed_a, summed_b;
    for (char ch : a) {
      const bool in_b = has(b, ch), in_out = has(out, ch);
      (in_b ? (in_out ? batch : contracted) : (in_out ? free_a : summed_a)) += ch;
    }
    for (char ch : b)
      if (!has(a, ch)) (has(out, ch) ? free_b : summed_b) += ch;
    // v (its dimensions named by `letters`) with its dimensions in the order `order`.
    auto ordered = [&](const std::string& v, const std::string& letters,
                       const std::string& order) -> std::string {
      std::vector<int64_t> perm;
      for (char ch : order) perm.push_back(static_cast<int64_t>(letters.find(ch)));
      if (std::is_sorted(perm.begin(), perm.end())) return v;
      return e_.transpose(v, perm);
    };
    // Letters summed within one operand first, moved last so that the reduced axes are
    // neighbours; returns the operand's remaining letters.
    auto sum_alone = [&](std::string& v, const std::string& letters, const std::string& summed) {
      if (summed.empty()) return letters;
      std::string kept;
      for (char ch : letters)
        if (!has(summed, ch)) kept += ch;
      v = ordered(v, letters, kept + summed);
      std::vector<int64_t> axes;
      for (size_t i = kept.size(); i < letters.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      v = e_.emit("ReduceSum", {v, e_.ints(axes)}, {{"keepdims", int64_t{0}}});
      return kept;
    };
    auto shape_of = [&](const std::string& letters) {
      std::vector<int64_t> shape;
      for (char ch : letters) shape.push_back(size[ch]);
      return shape;
    };
    auto prod = [&](const std::string& letters) {
      int64_t p = 1;
      for (char ch : letters) p *= size[ch];
      return p;
    };
    std::string lhs = n_.inputs[0];
    const std::string lhs_letters = sum_alone(lhs, a, summed_a);
    if (eq.inputs.size() == 1) {
      const std::string moved = ordered(lhs, lhs_letters, out);
      e_.reshape(moved, shape_of(out), output());  // a copy when nothing moved
      return true;
    }
    std::string rhs = n_.inputs[1];
    const std::string rhs_letters = sum_alone(rhs, b, summed_b);
    // Each operand as [batch..., rows, cols].
    auto as_matrix = [&](const std::string& v, const std::string& letters, const std::string& rows,
                         const std::string& cols) {
      std::vector<int64_t> shape = shape_of(batch);
      shape.push_back(prod(rows));
      shape.push_back(prod(cols));
      return e_.reshape(ordered(v, letters, batch + rows + cols), shape);
    };
    const std::string product =
        e_.emit("MatMul", {as_matrix(lhs, lhs_letters, free_a, contracted),
                           as_matrix(rhs, rhs_letters, contracted, free_b)});
    const std::string natural = batch + free_a + free_b;
    std::vector<int64_t> perm;
    for (char ch : out) perm.push_back(static_cast<int64_t>(natural.find(ch)));
    if (std::is_sorted(perm.begin(), perm.end())) {
      e_.reshape(product, shape_of(out), output());
    } else {
      e_.transpose(e_.reshape(product, shape_of(natural)), perm, output());
    }
    return true;
  }

  // A ConvTranspose whose stride is its kernel (no padding, dilation or groups) writes each
  // input pixel's KH x KW patch of outputs, with no overlap: DPT's and ViT decoders' patch
  // unembedding, U-Nets' 2x2 stride-2 upsampling. That is a 1x1 Conv to O x KH x KW channels
  // (the weight transposed at compile time) whose channels then move into the patches, as
  // DepthToSpace's CRD mode moves them, and the bias added per output channel. The direct
  // kernel instead tests every tap at every output pixel, KH x KW times the work.
  bool patch_conv_transpose() {
    const std::vector<int64_t> x = dims(n_.inputs[0]), y = dims(output());
    if (x.size() != 4 || !g_.is_constant(n_.inputs[1]) || n_.attr_int("group", 1) != 1 ||
        n_.has_attr("output_shape") || (n_.has_input(2) && !g_.is_constant(n_.inputs[2])))
      return false;
    const graph::HostTensor& w = g_.initializers.at(n_.inputs[1]);
    if (w.rank() != 4 || w.dtype() != graph::DataType::f32()) return false;
    const int64_t C = w.shape()[0], O = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
    auto all_equal = [&](const char* attr, std::vector<int64_t> want) {
      const std::vector<int64_t> v = n_.attr_ints(attr, want);
      return v == want;
    };
    const std::string auto_pad = n_.attr_string("auto_pad", "NOTSET");
    if (!all_equal("strides", {KH, KW}) || !all_equal("dilations", {1, 1}) ||
        !all_equal("pads", {0, 0, 0, 0}) || !all_equal("output_padding", {0, 0}) ||
        (auto_pad != "NOTSET" && auto_pad != "VALID") ||
        y != std::vector<int64_t>{x[0], O, x[2] * KH, x[3] * KW})
      return false;
    const int64_t N = x[0], H = x[2], W = x[3];
    // w1[(o KH + ky) KW + kx, c] = w[c, o, ky, kx].
    const std::vector<double> wv = w.to_f64();
    std::vector<double> w1(wv.size());
    const int64_t taps = O * KH * KW;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t) w1[t * C + c] = wv[c * taps + t];
    const std::string weight =
        e_.constant(graph::HostTensor::from_f64(graph::DataType::f32(), {taps, C, 1, 1}, w1));
    const std::string z = e_.emit("Conv", {n_.inputs[0], weight}, {});
    const std::string patches =
        e_.reshape(e_.transpose(e_.reshape(z, {N, O, KH, KW, H, W}), {0, 1, 4, 2, 5, 3}), y,
                   n_.has_input(2) ? "" : output());
    if (n_.has_input(2))
      e_.emit("Add", {patches, e_.reshape(n_.inputs[2], {1, O, 1, 1})}, {}, output());
    return true;
  }

  // GatherElements, GatherND, ScatterElements and ScatterND with constant indices (exporters
  // write in-place slice assignment, x[:, 0] = v, as ScatterND; BART's shift of the decoder
  // tokens does) copy elements by a map known at compile time: each output element is one
  // element of the data (or of the updates, for a scatter). The map comes from the reference
  // evaluator run on element numbers, so negative indices and bounds follow the operator's
  // own rules; the copy is a Gather from the flattened data (data and updates concatenated).
  bool indexed_copy(bool scatter) {
    const std::string& indices = n_.inputs[1];
    user_check(g_.is_constant(indices))
        << g_.describe(n_) << ": " << n_.op_type << " with computed indices is not supported "
        << "(its indices must be constants once the input shapes are bound)";
    user_check(!scatter || n_.attr_string("reduction", "none") == "none")
        << g_.describe(n_) << ": " << n_.op_type << " reduction '"
        << n_.attr_string("reduction", "none") << "' is not supported (only none)";
    auto numbered = [&](const std::string& v, int64_t first) {
      const std::vector<int64_t> d = dims(v);
      std::vector<int64_t> ids(static_cast<size_t>(graph::shape_numel(d)));
      std::iota(ids.begin(), ids.end(), first);
      return graph::HostTensor::from_i64(graph::DataType::i64(), d, ids);
    };
    const int64_t data_size = graph::shape_numel(dims(n_.inputs[0]));
    const graph::HostTensor data_ids = numbered(n_.inputs[0], 0);
    const graph::HostTensor update_ids =
        scatter ? numbered(n_.inputs[2], data_size) : graph::HostTensor();
    const std::vector<int64_t> source =
        graph::evaluate_node(g_, n_,
                             [&](const std::string& v) -> const graph::HostTensor* {
                               if (v == n_.inputs[0]) return &data_ids;
                               if (v == indices) return &g_.initializers.at(indices);
                               return scatter && v == n_.inputs[2] ? &update_ids : nullptr;
                             })[0]
            .to_i64();
    std::string from = e_.reshape(n_.inputs[0], {-1});
    if (scatter) from = e_.concat({from, e_.reshape(n_.inputs[2], {-1})}, 0);
    const std::string map = e_.constant(graph::HostTensor::from_i64(
        graph::DataType::i64(), {static_cast<int64_t>(source.size())}, source));
    e_.reshape(e_.emit("Gather", {from, map}, {{"axis", int64_t{0}}}), dims(output()), output());
    return true;
  }

  Graph& g_;
  const Node& n_;
  NodeEmitter e_;
};

}  // namespace

const std::vector<std::string>& decomposed_op_types() {
  static const std::vector<std::string> k = {"LogSoftmax",   "LRN",
                                             "DepthToSpace", "SpaceToDepth",
                                             "Tile",         "ReduceL1",
                                             "ReduceL2",     "ReduceSumSquare",
                                             "ReduceLogSum", "ReduceLogSumExp",
                                             "Sum",          "Mean",
                                             "Einsum",       "GatherElements",
                                             "GatherND",     "ScatterElements",
                                             "ScatterND"};
  return k;
}

int decompose_ops(Graph& g, int64_t max_concat_inputs) {
  return replace_nodes(g, [&](Node& n, std::vector<Node>& out) {
    return Decomposer(g, n, out, max_concat_inputs).run();
  });
}

}  // namespace kiln::graph
