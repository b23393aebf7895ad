#include "compiler/graph/rewrites/unroll_recurrent.h"

#include "compiler/base/error.h"
#include "compiler/graph/ops/recurrent.h"
#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/graph/rewrites/node_emitter.h"

namespace kiln::graph {


namespace {

enum { kX, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kPeepholes };
enum { kY, kYh, kYc };

class Unroller {
 public:
  Unroller(Graph& g, const Node& n, std::vector<Node>& out, int64_t max_concat_inputs)
      : g_(g), n_(n), e_(g, n, out, max_concat_inputs) {}

  void run() {
    read();
    // Every step's input projection at once: X as [seq x batch, input] rows.
    std::string x = n_.inputs[kX];
    if (r_.batch_first) x = e_.transpose(x, {1, 0, 2});
    const std::string rows = e_.reshape(x, {seq_ * batch_, input_});
    std::vector<std::string> ys, hs, cs;
    for (int64_t d = 0; d < r_.directions; ++d) {
      Direction dir = unroll(d, rows);
      ys.push_back(e_.reshape(e_.concat(dir.steps, 0), {seq_, 1, batch_, r_.hidden}));
      hs.push_back(e_.reshape(dir.h, {1, batch_, r_.hidden}));
      if (!dir.c.empty()) cs.push_back(e_.reshape(dir.c, {1, batch_, r_.hidden}));
    }
    write_output(kY, ys, 1, {2, 0, 1, 3});  // [seq, dirs, batch, H] or [batch, seq, dirs, H]
    write_output(kYh, hs, 0, {1, 0, 2});    // [dirs, batch, H] or [batch, dirs, H]
    write_output(kYc, cs, 0, {1, 0, 2});
  }

 private:
  struct Direction {
    std::vector<std::string> steps;  // H after each time step, in time order
    std::string h, c;                // the final states
  };

  void read() {
    auto dims = [&](size_t slot) { return g_.type_of(n_.inputs[slot])->dims(); };
    for (size_t slot : {kW, kR, kB, kPeepholes, kSeqLens})
      if (n_.has_input(slot))
        user_check(g_.is_constant(n_.inputs[slot]))
            << g_.describe(n_) << ": input " << slot << " ('" << n_.inputs[slot]
            << "') must be a constant: kiln compiles the weights and sequence lengths in";
    r_ = graph::read_recurrence(n_, dims(kW)[1]);
    const std::vector<int64_t> x = dims(kX);
    seq_ = r_.batch_first ? x[1] : x[0];
    batch_ = r_.batch_first ? x[0] : x[1];
    input_ = x[2];
    w_ = g_.initializers.at(n_.inputs[kW]).to_f64();
    rw_ = g_.initializers.at(n_.inputs[kR]).to_f64();
    const int64_t rows = r_.gates * r_.hidden;
    b_ = n_.has_input(kB) ? g_.initializers.at(n_.inputs[kB]).to_f64()
                          : std::vector<double>(r_.directions * 2 * rows, 0.0);
    if (n_.has_input(kPeepholes)) p_ = g_.initializers.at(n_.inputs[kPeepholes]).to_f64();
    lens_.assign(batch_, seq_);
    if (n_.has_input(kSeqLens)) lens_ = g_.initializers.at(n_.inputs[kSeqLens]).to_i64();
    for (int64_t len : lens_)
      user_check(len >= 0 && len <= seq_)
          << g_.describe(n_) << ": sequence length " << len << " is outside [0, " << seq_ << "]";
  }

  // Gates [first, first + count) of direction d's W (cols = input) or R (cols = hidden),
  // transposed to [cols, count x hidden]: the right operand of a MatMul.
  std::string transposed(const std::vector<double>& m, int64_t cols, int64_t d, int64_t first,
                         int64_t count) {
    const int64_t rows = count * r_.hidden, base = (d * r_.gates + first) * r_.hidden;
    std::vector<double> t(cols * rows);
    for (int64_t j = 0; j < rows; ++j)
      for (int64_t k = 0; k < cols; ++k) t[k * rows + j] = m[(base + j) * cols + k];
    return e_.constant(HostTensor::from_f64(DataType::f32(), {cols, rows}, t));
  }

  // GRU with linear_before_reset keeps Rb_h inside r * (H R_h^T + Rb_h); every other
  // recurrent bias is a constant added once to the input projection.
  bool rb_h_apart() const { return r_.kind == "GRU" && r_.linear_before_reset; }

  // Direction d's bias of the input projection: Wb + Rb of every gate but an Rb_h kept apart.
  std::string projection_bias(int64_t d) {
    const int64_t rows = r_.gates * r_.hidden;
    const double* wb = b_.data() + d * 2 * rows;
    std::vector<double> v(rows);
    for (int64_t j = 0; j < rows; ++j)
      v[j] = wb[j] + (rb_h_apart() && j >= 2 * r_.hidden ? 0.0 : wb[rows + j]);
    return e_.constant(HostTensor::from_f64(DataType::f32(), {rows}, v));
  }

  std::string recurrent_bias_h(int64_t d) {
    const int64_t rows = r_.gates * r_.hidden;
    const double* rb_h = b_.data() + d * 2 * rows + rows + 2 * r_.hidden;
    return e_.constant(HostTensor::from_f64(DataType::f32(), {r_.hidden},
                                            std::vector<double>(rb_h, rb_h + r_.hidden)));
  }

  std::string peephole(int64_t d, int64_t which) {
    std::vector<double> v(p_.begin() + (d * 3 + which) * r_.hidden,
                          p_.begin() + (d * 3 + which + 1) * r_.hidden);
    return e_.constant(HostTensor::from_f64(DataType::f32(), {r_.hidden}, v));
  }

  // Direction d's slice of initial_h or initial_c as [batch, H]; zeros when absent.
  std::string initial_state(size_t slot, int64_t d) {
    if (!n_.has_input(slot))
      return e_.constant(HostTensor::from_f64(DataType::f32(), {batch_, r_.hidden},
                                              std::vector<double>(batch_ * r_.hidden, 0.0)));
    const std::string s = e_.slice(n_.inputs[slot], r_.batch_first ? 1 : 0, d, d + 1);
    return e_.reshape(s, {batch_, r_.hidden});
  }

  std::string activate(const std::string& v, const graph::RecurrentActivation& a) {
    std::string in = v;
    if (r_.clip) in = e_.emit("Clip", {in, e_.scalar(-*r_.clip), e_.scalar(*r_.clip)});
    std::map<std::string, graph::AttrValue> attrs;
    if (a.op == "Elu" || a.op == "LeakyRelu" || a.op == "ThresholdedRelu" || a.op == "HardSigmoid")
      attrs["alpha"] = a.alpha;
    if (a.op == "HardSigmoid") attrs["beta"] = a.beta;
    return e_.emit(a.op, {in}, attrs);
  }

  std::string add(const std::string& a, const std::string& b) { return e_.emit("Add", {a, b}); }
  std::string mul(const std::string& a, const std::string& b) { return e_.emit("Mul", {a, b}); }
  std::string sub(const std::string& a, const std::string& b) { return e_.emit("Sub", {a, b}); }
  std::string matmul(const std::string& a, const std::string& b) {
    return e_.emit("MatMul", {a, b});
  }
  std::string gate(const std::string& v, int64_t index) {
    return e_.slice(v, 1, index * r_.hidden, (index + 1) * r_.hidden);
  }

  Direction unroll(int64_t d, const std::string& rows) {
    const int64_t H = r_.hidden;
    const std::vector<graph::RecurrentActivation>& act = r_.activations[d];
    const std::string projected =
        add(matmul(rows, transposed(w_, input_, d, 0, r_.gates)), projection_bias(d));
    // GRU: R_z and R_r act on H together, R_h on H or on r * H apart.
    const std::string r_all = transposed(rw_, H, d, 0, r_.kind == "GRU" ? 2 : r_.gates);
    std::string r_h, rb_h;
    if (r_.kind == "GRU") r_h = transposed(rw_, H, d, 2, 1);
    if (rb_h_apart()) rb_h = recurrent_bias_h(d);

    Direction out;
    out.steps.resize(seq_);
    std::string h = initial_state(kInitialH, d), c;
    if (r_.kind == "LSTM") c = initial_state(kInitialC, d);
    for (int64_t s = 0; s < seq_; ++s) {
      const int64_t t = r_.runs_backward(d) ? seq_ - 1 - s : s;
      const std::string xt = e_.slice(projected, 0, t * batch_, (t + 1) * batch_);
      std::string next_h, next_c;
      if (r_.kind == "RNN") {
        next_h = activate(add(xt, matmul(h, r_all)), act[0]);
      } else if (r_.kind == "GRU") {
        const std::string x_zr = e_.slice(xt, 1, 0, 2 * H), x_h = gate(xt, 2);
        const std::string zr = activate(add(x_zr, matmul(h, r_all)), act[0]);
        const std::string z = gate(zr, 0), reset = gate(zr, 1);
        const std::string recurrent = r_.linear_before_reset ? mul(reset, add(matmul(h, r_h), rb_h))
                                                             : matmul(mul(reset, h), r_h);
        const std::string candidate = activate(add(x_h, recurrent), act[1]);
        next_h = add(candidate, mul(z, sub(h, candidate)));  // (1 - z) candidate + z h
      } else {
        const std::string pre = add(xt, matmul(h, r_all));
        std::string pi = gate(pre, 0), po = gate(pre, 1), pf = gate(pre, 2);
        if (!p_.empty()) {
          pi = add(pi, mul(c, peephole(d, 0)));
          pf = add(pf, mul(c, peephole(d, 2)));
        }
        const std::string i = activate(pi, act[0]);
        const std::string f = r_.input_forget ? sub(e_.scalar(1), i) : activate(pf, act[0]);
        const std::string g = activate(gate(pre, 3), act[1]);
        next_c = add(mul(f, c), mul(i, g));
        if (!p_.empty()) po = add(po, mul(next_c, peephole(d, 1)));
        next_h = mul(activate(po, act[0]), activate(next_c, act[2]));
      }
      out.steps[t] = next_h;
      if (const std::string m = step_mask(t); !m.empty()) {
        // Past a sequence's end the state stays and Y is zero: h + m (h' - h), m h'.
        out.steps[t] = mul(next_h, m);
        next_h = add(h, mul(m, sub(next_h, h)));
        if (!next_c.empty()) next_c = add(c, mul(m, sub(next_c, c)));
      }
      h = next_h;
      c = next_c;
    }
    out.h = h;
    out.c = c;
    return out;
  }

  // [batch, 1]: 1 where step t is inside the sequence; "" when every sequence covers it.
  std::string step_mask(int64_t t) {
    std::vector<double> m(batch_);
    bool all = true;
    for (int64_t b = 0; b < batch_; ++b) {
      m[b] = t < lens_[b] ? 1.0 : 0.0;
      all &= m[b] == 1.0;
    }
    if (all) return "";
    return e_.constant(HostTensor::from_f64(DataType::f32(), {batch_, 1}, m));
  }

  // Writes output `slot` from one value per direction, joined on `axis`, then for layout 1
  // transposed by `batch_first_perm`.
  void write_output(size_t slot, const std::vector<std::string>& parts, int64_t axis,
                    const std::vector<int64_t>& batch_first_perm) {
    if (!n_.has_output(slot)) return;
    const std::string& name = n_.outputs[slot];
    if (!r_.batch_first) {
      e_.concat(parts, axis, name);
      return;
    }
    e_.transpose(e_.concat(parts, axis), batch_first_perm, name);
  }

  Graph& g_;
  const Node& n_;
  NodeEmitter e_;
  graph::Recurrence r_;
  int64_t seq_ = 0, batch_ = 0, input_ = 0;
  std::vector<double> w_, rw_, b_, p_;
  std::vector<int64_t> lens_;
};

}  // namespace

int unroll_recurrent(Graph& g, int64_t max_concat_inputs) {
  return replace_nodes(g, [&](Node& n, std::vector<Node>& out) {
    if (n.op_type != "LSTM" && n.op_type != "GRU" && n.op_type != "RNN") return false;
    Unroller(g, n, out, max_concat_inputs).run();
    return true;
  });
}

}  // namespace kiln::graph
