// LSTM, GRU and RNN: attribute reading (recurrent.h), shape inference, and the reference
// evaluator, which follows ONNX's equations step by step in double precision.
#include "compiler/graph/ops/recurrent.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

const std::vector<std::string>& recurrent_activation_ops() {
  static const std::vector<std::string> k = {"Sigmoid",   "Tanh",        "Relu",
                                             "Softsign",  "Softplus",    "Elu",
                                             "LeakyRelu", "HardSigmoid", "ThresholdedRelu"};
  return k;
}

double RecurrentActivation::apply(double x) const {
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Relu") return x > 0 ? x : 0.0;
  if (op == "Softsign") return x / (1 + std::fabs(x));
  if (op == "Softplus") return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  if (op == "Elu") return x < 0 ? alpha * std::expm1(x) : x;
  if (op == "LeakyRelu") return x < 0 ? alpha * x : x;
  if (op == "HardSigmoid") return std::min(1.0, std::max(0.0, alpha * x + beta));
  if (op == "ThresholdedRelu") return x > alpha ? x : 0.0;
  internal_error() << "unknown recurrent activation " << op;
  return x;
}

namespace {

struct KindInfo {
  int64_t gates;
  std::vector<std::string> default_activations;
};

KindInfo kind_info(const std::string& kind) {
  if (kind == "LSTM") return {4, {"Sigmoid", "Tanh", "Tanh"}};
  if (kind == "GRU") return {3, {"Sigmoid", "Tanh"}};
  return {1, {"Tanh"}};
}

// ONNX's default coefficients of the activations that take them.
RecurrentActivation activation_with_defaults(const std::string& op) {
  RecurrentActivation a{op};
  if (op == "LeakyRelu") a.alpha = 0.01f;
  if (op == "HardSigmoid") a.alpha = 0.2f, a.beta = 0.5f;
  if (op == "Elu" || op == "ThresholdedRelu") a.alpha = 1.0f;
  return a;
}

std::string canonical_activation(const std::string& name) {
  for (const std::string& op : recurrent_activation_ops()) {
    if (op.size() != name.size()) continue;
    bool same = true;  // exporters differ in case ("sigmoid", "Sigmoid")
    for (size_t i = 0; i < op.size(); ++i) same &= std::tolower(op[i]) == std::tolower(name[i]);
    if (same) return op;
  }
  std::string valid;
  for (const std::string& op : recurrent_activation_ops())
    valid += (valid.empty() ? "" : ", ") + op;
  user_error() << "activation '" << name
               << "' is not supported in a recurrence (supported: " << valid << ")";
  return name;
}

}  // namespace

Recurrence read_recurrence(const Node& node, int64_t hidden_rows) {
  Recurrence r;
  r.kind = node.op_type;
  const KindInfo info = kind_info(r.kind);
  r.gates = info.gates;
  user_check(hidden_rows % r.gates == 0)
      << "W has " << hidden_rows << " rows, not a multiple of the " << r.gates << " gates";
  r.hidden = node.attr_int("hidden_size", hidden_rows / r.gates);
  user_check(r.hidden > 0 && r.hidden * r.gates == hidden_rows)
      << "hidden_size " << r.hidden << " does not match W's " << hidden_rows << " rows (" << r.gates
      << " gates)";
  const std::string direction = node.attr_string("direction", "forward");
  user_check(direction == "forward" || direction == "reverse" || direction == "bidirectional")
      << "direction '" << direction << "' is not one of forward, reverse, bidirectional";
  r.directions = direction == "bidirectional" ? 2 : 1;
  r.reverse = direction == "reverse";
  r.batch_first = node.attr_int("layout", 0) != 0;
  if (node.has_attr("clip")) {
    r.clip = node.attr_float("clip", 0);
    user_check(*r.clip > 0) << "clip must be positive, got " << *r.clip;
  }
  r.input_forget = node.attr_int("input_forget", 0) != 0;
  r.linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;

  // Activations: one list per direction; alpha and beta sit at the index of the activation
  // they belong to.
  const size_t per_direction = info.default_activations.size();
  std::vector<std::string> names;
  if (auto it = node.attrs.find("activations"); it != node.attrs.end()) {
    const auto* list = std::get_if<std::vector<std::string>>(&it->second);
    user_check(list != nullptr) << "attribute 'activations' must be a list of strings";
    names = *list;
  }
  if (names.empty())
    for (int64_t d = 0; d < r.directions; ++d)
      names.insert(names.end(), info.default_activations.begin(), info.default_activations.end());
  if (names.size() == per_direction && r.directions == 2)
    names.insert(names.end(), names.begin(), names.end());  // one list given for both
  user_check(names.size() == per_direction * static_cast<size_t>(r.directions))
      << r.kind << " takes " << per_direction << " activations per direction, got " << names.size();
  const std::vector<float> alphas = node.attr_floats("activation_alpha");
  const std::vector<float> betas = node.attr_floats("activation_beta");
  r.activations.resize(r.directions);
  for (size_t k = 0; k < names.size(); ++k) {
    RecurrentActivation a = activation_with_defaults(canonical_activation(names[k]));
    if (k < alphas.size()) a.alpha = alphas[k];
    if (k < betas.size()) a.beta = betas[k];
    r.activations[k / per_direction].push_back(a);
  }
  return r;
}

namespace {

// Input and output slots.
enum { kX, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kPeepholes };

std::vector<TensorType> infer_recurrent(const InferContext& ctx) {
  require_float(ctx, kX);
  const std::vector<int64_t>& x = ctx.shape(kX);
  const std::vector<int64_t>& w = ctx.shape(kW);
  user_check(x.size() == 3) << "X must be rank 3, got rank " << x.size();
  user_check(w.size() == 3) << "W must be [directions, gates x hidden, input], got rank "
                            << w.size();
  const Recurrence r = read_recurrence(ctx.node(), w[1]);
  const int64_t seq = r.batch_first ? x[1] : x[0], batch = r.batch_first ? x[0] : x[1];
  auto expect = [&](size_t slot, const char* name, std::vector<int64_t> want) {
    if (!ctx.has_input(slot)) return;
    user_check(ctx.shape(slot) == want)
        << name << " has shape " << shape_str(ctx.shape(slot)) << ", expected " << shape_str(want);
  };
  const int64_t dirs = r.directions, rows = r.gates * r.hidden;
  expect(kW, "W", {dirs, rows, x[2]});
  expect(kR, "R", {dirs, rows, r.hidden});
  expect(kB, "B", {dirs, 2 * rows});
  expect(kSeqLens, "sequence_lens", {batch});
  const std::vector<int64_t> state = r.batch_first ? std::vector<int64_t>{batch, dirs, r.hidden}
                                                   : std::vector<int64_t>{dirs, batch, r.hidden};
  expect(kInitialH, "initial_h", state);
  if (r.kind == "LSTM") {
    expect(kInitialC, "initial_c", state);
    expect(kPeepholes, "P", {dirs, 3 * r.hidden});
  }
  const DataType t = ctx.dtype(kX);
  std::vector<TensorType> out = {
      {t, r.batch_first ? std::vector<int64_t>{batch, seq, dirs, r.hidden}
                        : std::vector<int64_t>{seq, dirs, batch, r.hidden}},
      {t, state}};
  if (r.kind == "LSTM") out.push_back({t, state});
  return out;
}

// The inputs as doubles, with the row-major index arithmetic of their ONNX shapes.
struct Operands {
  Recurrence r;
  int64_t seq = 0, batch = 0, input = 0;
  std::vector<double> x, w, rw, b, h0, c0, p;
  std::vector<int64_t> lens;

  double X(int64_t t, int64_t n, int64_t i) const {
    return x[(r.batch_first ? n * seq + t : t * batch + n) * input + i];
  }
  // Row `row` of gate block `gate` of direction d, times column `col`.
  double W(int64_t d, int64_t gate, int64_t row, int64_t col) const {
    return w[((d * r.gates + gate) * r.hidden + row) * input + col];
  }
  double R(int64_t d, int64_t gate, int64_t row, int64_t col) const {
    return rw[((d * r.gates + gate) * r.hidden + row) * r.hidden + col];
  }
  // Wb (which = 0) or Rb (which = 1).
  double bias(int64_t d, int64_t which, int64_t gate, int64_t row) const {
    return b.empty() ? 0.0 : b[(d * 2 + which) * r.gates * r.hidden + gate * r.hidden + row];
  }
  int64_t state_index(int64_t d, int64_t n, int64_t j) const {
    return r.batch_first ? (n * r.directions + d) * r.hidden + j : (d * batch + n) * r.hidden + j;
  }
};

std::vector<double> optional_f64(const EvalContext& ctx, size_t slot) {
  return ctx.has_input(slot) ? ctx.input(slot).to_f64() : std::vector<double>{};
}

std::vector<HostTensor> eval_recurrent(const EvalContext& ctx) {
  const std::vector<TensorType> types = infer_recurrent(ctx.infer_context());
  Operands o;
  o.r = read_recurrence(ctx.node(), ctx.input(kW).shape()[1]);
  const std::vector<int64_t>& xs = ctx.input(kX).shape();
  o.seq = o.r.batch_first ? xs[1] : xs[0];
  o.batch = o.r.batch_first ? xs[0] : xs[1];
  o.input = xs[2];
  o.x = ctx.input(kX).to_f64();
  o.w = ctx.input(kW).to_f64();
  o.rw = ctx.input(kR).to_f64();
  o.b = optional_f64(ctx, kB);
  o.h0 = optional_f64(ctx, kInitialH);
  if (o.r.kind == "LSTM") {
    o.c0 = optional_f64(ctx, kInitialC);
    o.p = optional_f64(ctx, kPeepholes);
  }
  o.lens.assign(o.batch, o.seq);
  if (ctx.has_input(kSeqLens)) o.lens = ctx.input(kSeqLens).to_i64();
  for (int64_t len : o.lens)
    user_check(len >= 0 && len <= o.seq)
        << "sequence length " << len << " is outside [0, " << o.seq << "]";

  const Recurrence& r = o.r;
  const int64_t H = r.hidden;
  std::vector<double> y(shape_numel(types[0].shape), 0.0), yh(shape_numel(types[1].shape), 0.0);
  std::vector<double> yc(yh.size(), 0.0);
  auto clipped = [&](double v) {
    return r.clip ? std::clamp(v, -double(*r.clip), double(*r.clip)) : v;
  };
  for (int64_t d = 0; d < r.directions; ++d) {
    const std::vector<RecurrentActivation>& act = r.activations[d];
    for (int64_t n = 0; n < o.batch; ++n) {
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!o.h0.empty()) h[j] = o.h0[o.state_index(d, n, j)];
        if (!o.c0.empty()) c[j] = o.c0[o.state_index(d, n, j)];
      }
      // gate pre-activation: X W^T + Wb (+ H R^T + Rb, added where the equations add it)
      auto xw = [&](int64_t t, int64_t gate, int64_t j) {
        double s = o.bias(d, 0, gate, j);
        for (int64_t i = 0; i < o.input; ++i) s += o.X(t, n, i) * o.W(d, gate, j, i);
        return s;
      };
      auto hr = [&](const std::vector<double>& hv, int64_t gate, int64_t j) {
        double s = o.bias(d, 1, gate, j);
        for (int64_t k = 0; k < H; ++k) s += hv[k] * o.R(d, gate, j, k);
        return s;
      };
      for (int64_t step = 0; step < o.lens[n]; ++step) {
        const int64_t t = r.runs_backward(d) ? o.lens[n] - 1 - step : step;
        std::vector<double> next(H), next_c(H);
        if (r.kind == "GRU") {
          std::vector<double> z(H), reset(H), reset_h(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = act[0].apply(clipped(xw(t, 0, j) + hr(h, 0, j)));
            reset[j] = act[0].apply(clipped(xw(t, 1, j) + hr(h, 1, j)));
            reset_h[j] = reset[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double recurrent =
                r.linear_before_reset ? reset[j] * hr(h, 2, j) : hr(reset_h, 2, j);
            const double candidate = act[1].apply(clipped(xw(t, 2, j) + recurrent));
            next[j] = (1 - z[j]) * candidate + z[j] * h[j];
          }
        }
        for (int64_t j = 0; j < H && r.kind == "RNN"; ++j)
          next[j] = act[0].apply(clipped(xw(t, 0, j) + hr(h, 0, j)));
        for (int64_t j = 0; j < H && r.kind == "LSTM"; ++j) {
          auto peep = [&](int64_t which, double state) {
            return o.p.empty() ? 0.0 : o.p[d * 3 * H + which * H + j] * state;
          };
          const double i = act[0].apply(clipped(xw(t, 0, j) + hr(h, 0, j) + peep(0, c[j])));
          const double f = r.input_forget
                               ? 1 - i
                               : act[0].apply(clipped(xw(t, 2, j) + hr(h, 2, j) + peep(2, c[j])));
          const double g = act[1].apply(clipped(xw(t, 3, j) + hr(h, 3, j)));
          next_c[j] = f * c[j] + i * g;
          const double og = act[0].apply(clipped(xw(t, 1, j) + hr(h, 1, j) + peep(1, next_c[j])));
          next[j] = og * act[2].apply(next_c[j]);
        }
        h = next;
        if (r.kind == "LSTM") c = next_c;
        for (int64_t j = 0; j < H; ++j) {
          const int64_t yi = r.batch_first ? ((n * o.seq + t) * r.directions + d) * H + j
                                           : ((t * r.directions + d) * o.batch + n) * H + j;
          y[yi] = h[j];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        yh[o.state_index(d, n, j)] = h[j];
        yc[o.state_index(d, n, j)] = c[j];
      }
    }
  }
  const DataType t = ctx.input(kX).dtype();
  std::vector<HostTensor> out = {HostTensor::from_f64(t, types[0].shape, y),
                                 HostTensor::from_f64(t, types[1].shape, yh)};
  if (r.kind == "LSTM") out.push_back(HostTensor::from_f64(t, types[1].shape, yc));
  return out;
}

OpDef recurrent_op(const std::string& kind, int max_inputs, int max_outputs) {
  std::vector<std::string> attributes = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout"};
  if (kind == "LSTM") attributes.push_back("input_forget");
  if (kind == "GRU") attributes.push_back("linear_before_reset");
  OpDef def{kind, attributes, 3, max_inputs, 0, max_outputs};
  def.infer = infer_recurrent;
  def.eval = eval_recurrent;
  return def;
}

}  // namespace

void add_recurrent_ops(OpList& ops) {
  ops.push_back(recurrent_op("LSTM", 8, 3));
  ops.push_back(recurrent_op("GRU", 6, 2));
  ops.push_back(recurrent_op("RNN", 6, 2));
}

}  // namespace kiln::graph
