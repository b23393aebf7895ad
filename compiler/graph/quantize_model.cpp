#include "compiler/graph/quantize_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "compiler/base/error.h"
#include "compiler/graph/bind.h"
#include "compiler/graph/calibrate_ranges.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/onnx_tensor.h"

namespace kiln::graph {

namespace {

// One operator to quantize: its data input, its constant weights (quantized along `axis`), its
// bias (or ""), and the activation after it whose range its output takes.
struct Site {
  int node;
  std::string data, weight, bias, result;
  int64_t axis;
};

// The u8 scale and zero point of a range (widened to include 0, so 0.0 is exact).
struct U8Params {
  float scale;
  int64_t zero;
};
U8Params u8_params(double lo, double hi) {
  lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  const double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
  const double zero = std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0);
  return {static_cast<float>(scale), static_cast<int64_t>(zero)};
}

int64_t attr_int(const onnx::NodeProto& n, const std::string& key, int64_t fallback) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == key) return a.i();
  return fallback;
}

double attr_float(const onnx::NodeProto& n, const std::string& key, double fallback) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == key) return a.f();
  return fallback;
}

class Quantizer {
 public:
  explicit Quantizer(onnx::ModelProto& m) : m_(m) {
    for (int64_t i = 0; i < m.graph().initializer_size(); ++i)
      inits_[m.graph().initializer(i).name()] = i;
    for (const auto& op : m.opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
  }

  // The operators to quantize (skipping those in keep_float, which are reported).
  std::vector<Site> sites(const std::set<std::string>& keep, std::vector<std::string>* kept) {
    std::vector<Site> out;
    const onnx::GraphProto& gp = m_.graph();
    for (int i = 0; i < gp.node_size(); ++i) {
      const onnx::NodeProto& n = gp.node(i);
      const std::string& op = n.op_type();
      if (op != "Conv" && op != "MatMul" && op != "Gemm") continue;
      const std::string key = n.name().empty() ? n.output(0) : n.name();
      if (keep.count(key)) {
        kept->push_back(key);
        continue;
      }
      if (n.input_size() < 2 || !is_f32_constant(n.input(1)) || is_f32_constant(n.input(0)))
        continue;
      const int64_t rank = initializer(n.input(1)).dims_size();
      Site s{i, n.input(0), n.input(1), "", n.output(0), 0};
      if (op == "Conv") {
        if (rank != 4 || attr_int(n, "group", 1) != 1) continue;  // the int8 kernels' limits
      } else if (op == "MatMul") {
        if (rank != 2) continue;
        s.axis = 1;
      } else {
        if (rank != 2 || attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1) != 1 ||
            attr_float(n, "beta", 1) != 1)
          continue;
        s.axis = attr_int(n, "transB", 0) != 0 ? 0 : 1;
      }
      if (op != "MatMul" && n.input_size() > 2 && !n.input(2).empty() &&
          is_f32_constant(n.input(2)) && initializer(n.input(2)).dims_size() == 1)
        s.bias = n.input(2);
      // A Relu that alone reads the result: its output's range is the one kept (ORT's way),
      // so that the zero point is 0 and the saturation at 0 is the Relu.
      if (const onnx::NodeProto* r = only_reader(s.result); r && r->op_type() == "Relu")
        s.result = r->output(0);
      out.push_back(s);
    }
    return out;
  }

  // Quantize-Dequantize after every activation in `ranges`, int8 weights and int32 biases for
  // the sites; returns how many weights were quantized.
  int rewrite(const std::vector<Site>& sites, const std::map<std::string, U8Params>& ranges) {
    onnx::GraphProto* gp = m_.mutable_graph();
    std::vector<onnx::NodeProto> before, nodes;
    std::map<std::string, std::string> dequantized;  // activation -> its DQ output
    auto pair_for = [&](const std::string& v, std::vector<onnx::NodeProto>& into) {
      const U8Params& q = ranges.at(v);
      const std::string scale =
          add_initializer(v + "_scale", HostTensor::from_f64(DataType::f32(), {}, {q.scale}));
      const std::string zero =
          add_initializer(v + "_zero_point", HostTensor::from_i64(DataType::u8(), {}, {q.zero}));
      into.push_back(node("QuantizeLinear", {v, scale, zero}, v + "_quantized"));
      into.push_back(node("DequantizeLinear", {v + "_quantized", scale, zero}, v + "_dequantized"));
      dequantized[v] = v + "_dequantized";
    };
    for (const onnx::ValueInfoProto& in : gp->input())
      if (ranges.count(in.name())) pair_for(in.name(), before);
    int weights = 0;
    std::map<int, const Site*> at;
    for (const Site& s : sites) at[s.node] = &s;
    for (int i = 0; i < gp->node_size(); ++i) {
      onnx::NodeProto n = gp->node(i);
      if (auto it = at.find(i); it != at.end()) {
        const Site& s = *it->second;
        const std::vector<double> sw = quantize_weight(s, before);
        ++weights;
        n.set_input(1, s.weight + "_dequantized");
        if (!s.bias.empty()) {
          quantize_bias(s, ranges.at(s.data).scale, sw, before);
          n.set_input(2, s.bias + "_dequantized");
        }
      }
      nodes.push_back(n);
      for (const std::string& out : n.output())
        if (ranges.count(out)) pair_for(out, nodes);
    }
    // Readers (not the Quantize of the value itself) take the dequantized value; graph
    // outputs stay the float values.
    for (onnx::NodeProto& n : nodes) {
      if (n.op_type() == "QuantizeLinear" && dequantized.count(n.input(0)) &&
          n.output(0) == n.input(0) + "_quantized")
        continue;
      for (int k = 0; k < n.input_size(); ++k)
        if (auto it = dequantized.find(n.input(k)); it != dequantized.end())
          n.set_input(k, it->second);
    }
    gp->clear_node();
    for (const auto* list : {&before, &nodes})
      for (const onnx::NodeProto& n : *list) *gp->add_node() = n;
    return weights;
  }

 private:
  bool is_f32_constant(const std::string& v) const {
    auto it = inits_.find(v);
    return it != inits_.end() &&
           m_.graph().initializer(it->second).data_type() == onnx::TensorProto::FLOAT;
  }
  const onnx::TensorProto& initializer(const std::string& v) const {
    return m_.graph().initializer(inits_.at(v));
  }
  const onnx::NodeProto* only_reader(const std::string& v) const {
    const onnx::NodeProto* found = nullptr;
    for (const onnx::NodeProto& n : m_.graph().node())
      for (const std::string& in : n.input())
        if (in == v) {
          if (found) return nullptr;
          found = &n;
        }
    for (const onnx::ValueInfoProto& o : m_.graph().output())
      if (o.name() == v) return nullptr;
    return found;
  }

  std::string add_initializer(const std::string& name, const HostTensor& t) {
    *m_.mutable_graph()->add_initializer() = tensor_to_onnx(t, name);
    inits_[name] = m_.graph().initializer_size() - 1;
    return name;
  }

  static onnx::NodeProto node(const std::string& op, const std::vector<std::string>& in,
                              const std::string& out, int64_t axis = -1) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(out);
    for (const std::string& v : in) n.add_input(v);
    n.add_output(out);
    if (axis >= 0) {
      onnx::AttributeProto* a = n.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
    return n;
  }

  // int8 weights, symmetric per channel along the site's axis (per tensor before opset 13,
  // which has no per-axis DequantizeLinear); returns the scales.
  std::vector<double> quantize_weight(const Site& s, std::vector<onnx::NodeProto>& into) {
    if (auto it = weight_scales_.find(s.weight); it != weight_scales_.end()) return it->second;
    const HostTensor w = tensor_from_onnx(initializer(s.weight), s.weight);
    const std::vector<int64_t>& shape = w.shape();
    const bool per_channel = opset_ >= 13;
    const int64_t channels = per_channel ? shape[s.axis] : 1;
    int64_t inner = 1;
    for (size_t d = s.axis + 1; d < shape.size(); ++d) inner *= shape[d];
    const std::vector<double> v = w.to_f64();
    auto channel_of = [&](size_t i) {
      return per_channel ? (int64_t(i) / inner) % shape[s.axis] : 0;
    };
    std::vector<double> amax(channels, 0.0), scale(channels);
    for (size_t i = 0; i < v.size(); ++i)
      amax[channel_of(i)] = std::max(amax[channel_of(i)], std::fabs(v[i]));
    for (int64_t c = 0; c < channels; ++c)
      scale[c] = double(static_cast<float>(amax[c] > 0 ? amax[c] / 127.0 : 1.0));
    std::vector<int64_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      q[i] = static_cast<int64_t>(
          std::clamp(std::nearbyint(v[i] / scale[channel_of(i)]), -127.0, 127.0));
    const std::vector<int64_t> cshape =
        per_channel ? std::vector<int64_t>{channels} : std::vector<int64_t>{};
    const std::string wq =
        add_initializer(s.weight + "_quantized", HostTensor::from_i64(DataType::i8(), shape, q));
    const std::string ws =
        add_initializer(s.weight + "_scale", HostTensor::from_f64(DataType::f32(), cshape, scale));
    const std::string wz = add_initializer(
        s.weight + "_zero_point",
        HostTensor::from_i64(DataType::i8(), cshape, std::vector<int64_t>(channels, 0)));
    into.push_back(node("DequantizeLinear", {wq, ws, wz}, s.weight + "_dequantized",
                        per_channel ? s.axis : -1));
    return weight_scales_[s.weight] = scale;
  }

  // int32 bias with scale data_scale * weight_scale[c], as quantize_static writes it.
  void quantize_bias(const Site& s, float data_scale, const std::vector<double>& sw,
                     std::vector<onnx::NodeProto>& into) {
    const std::vector<double> b = tensor_from_onnx(initializer(s.bias), s.bias).to_f64();
    std::vector<double> scale(b.size());
    std::vector<int64_t> q(b.size());
    for (size_t c = 0; c < b.size(); ++c) {
      scale[c] = double(data_scale * static_cast<float>(sw[sw.size() == 1 ? 0 : c]));
      const double limit = double(std::numeric_limits<int32_t>::max());
      q[c] = static_cast<int64_t>(std::clamp(std::nearbyint(b[c] / scale[c]), -limit, limit));
    }
    const int64_t n = static_cast<int64_t>(b.size());
    const std::string bq =
        add_initializer(s.bias + "_quantized", HostTensor::from_i64(DataType::i32(), {n}, q));
    const std::string bs =
        add_initializer(s.bias + "_scale", HostTensor::from_f64(DataType::f32(), {n}, scale));
    into.push_back(
        node("DequantizeLinear", {bq, bs}, s.bias + "_dequantized", opset_ >= 13 ? 0 : -1));
  }

  onnx::ModelProto& m_;
  std::map<std::string, int64_t> inits_;
  std::map<std::string, std::vector<double>> weight_scales_;  // a weight two sites share: once
  int64_t opset_ = 13;
};

QuantizeError error_of(const std::string& name, const HostTensor& got, const HostTensor& want) {
  const std::vector<double> g = got.to_f64(), w = want.to_f64();
  QuantizeError e{name, 0, 0};
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
    e.max_abs = std::max(e.max_abs, std::fabs(g[i] - w[i]));
    diff2 += (g[i] - w[i]) * (g[i] - w[i]), ref2 += w[i] * w[i];
  }
  e.relative_rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return e;
}

Graph bound(const std::string& bytes, const std::string& source,
            const std::map<std::string, HostTensor>& inputs) {
  Graph g = import_onnx_bytes(bytes, source);
  ShapeBindings shapes;
  for (const auto& [name, t] : inputs) shapes[name] = t.shape();
  bind_input_shapes(g, shapes);
  return g;
}

}  // namespace

std::string quantize_model(const std::string& model_bytes, const std::string& source,
                           const std::vector<std::map<std::string, HostTensor>>& calibration,
                           const QuantizeOptions& options, QuantizeReport* report) {
  user_check(!calibration.empty())
      << source << ": quantization needs at least one calibration input";
  onnx::ModelProto model;
  user_check(model.ParseFromString(model_bytes)) << source << ": not an ONNX model";
  const Graph g = bound(model_bytes, source, calibration[0]);
  QuantizeReport r;
  Quantizer q(model);
  const std::set<std::string> keep(options.keep_float.begin(), options.keep_float.end());
  const std::vector<Site> sites = q.sites(keep, &r.kept_float);
  for (const std::string& k : keep)
    user_check(std::count(r.kept_float.begin(), r.kept_float.end(), k))
        << source << ": --keep-float " << k << " names no Conv, MatMul or Gemm of the model";
  user_check(!sites.empty()) << source
                             << ": no Conv, MatMul or Gemm with constant weights to quantize";

  // A model's output stays float: a Quantize-Dequantize nobody reads would only cost time.
  std::set<std::string> activations;
  for (const Site& s : sites) {
    activations.insert(s.data);
    if (std::find(g.outputs.begin(), g.outputs.end(), s.result) == g.outputs.end())
      activations.insert(s.result);
  }
  std::map<std::string, U8Params> params;
  user_check(options.ranges.method != RangeMethod::kPercentile ||
             (options.ranges.percentile > 50 && options.ranges.percentile <= 100))
      << source << ": the calibration percentile must be in (50, 100], got "
      << options.ranges.percentile;
  for (const auto& [v, range] : calibrate_ranges(g, activations, calibration, options.ranges))
    params[v] = u8_params(range.first, range.second);
  r.weights = q.rewrite(sites, params);
  r.activations = static_cast<int>(params.size());
  std::string out;
  internal_check(model.SerializeToString(&out)) << "quantize_model: cannot serialize";

  // The quantized model against the float one on the calibration inputs.
  Graph quantized = bound(out, source, calibration[0]);
  Graph float_model = g;
  std::map<std::string, QuantizeError> outputs;
  std::map<std::string, QuantizeError> layers;
  for (const auto& inputs : calibration) {
    Graph qv = quantized, fv = float_model;
    for (const auto& [v, p] : params)
      qv.outputs.push_back(v + "_dequantized"), fv.outputs.push_back(v);
    const auto got = evaluate(qv, inputs), want = evaluate(fv, inputs);
    for (const std::string& o : g.outputs) {
      QuantizeError e = error_of(o, got.at(o), want.at(o));
      QuantizeError& acc = outputs.try_emplace(o, QuantizeError{o, 0, 0}).first->second;
      acc.max_abs = std::max(acc.max_abs, e.max_abs),
      acc.relative_rms = std::max(acc.relative_rms, e.relative_rms);
    }
    for (const auto& [v, p] : params) {
      QuantizeError e = error_of(v, got.at(v + "_dequantized"), want.at(v));
      QuantizeError& acc = layers.try_emplace(v, QuantizeError{v, 0, 0}).first->second;
      acc.max_abs = std::max(acc.max_abs, e.max_abs),
      acc.relative_rms = std::max(acc.relative_rms, e.relative_rms);
    }
  }
  for (const std::string& o : g.outputs) r.outputs.push_back(outputs.at(o));
  for (const auto& [v, e] : layers) r.worst_layers.push_back(e);
  std::sort(r.worst_layers.begin(), r.worst_layers.end(),
            [](const QuantizeError& a, const QuantizeError& b) {
              return a.relative_rms > b.relative_rms;
            });
  if (r.worst_layers.size() > 5) r.worst_layers.resize(5);
  if (report) *report = std::move(r);
  return out;
}

}  // namespace kiln::graph
