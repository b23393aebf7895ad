#include "compiler/graph/rewrites/where_to_arithmetic.h"

#include <cmath>

namespace kiln::graph {


namespace {

// numpy broadcasting of two shapes.
std::vector<int64_t> broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] == 1 ? b[i] : a[i];
  return a;
}

// The condition as an f32 constant: `when_true` where it holds, `when_false` elsewhere.
std::string mask_constant(Graph& g, const HostTensor& cond, const std::string& name,
                          double when_true, double when_false) {
  std::vector<int64_t> c = cond.to_i64();
  std::vector<double> v(c.size());
  for (size_t i = 0; i < c.size(); ++i) v[i] = c[i] ? when_true : when_false;
  return g.add_constant(name, HostTensor::from_f64(graph::DataType::f32(), cond.shape(), v));
}

bool is_f32_scalar(const Graph& g, const std::string& v) {
  return g.is_constant(v) && g.initializers.at(v).numel() == 1 &&
         g.initializers.at(v).dtype() == graph::DataType::f32();
}

class Rewriter {
 public:
  Rewriter(Graph& g, std::vector<Node>& out) : g_(g), out_(out) {}

  // A binary node appended to the output, its result typed `dims`.
  std::string binary(const Node& where, const char* op, const std::string& a, const std::string& b,
                     const std::vector<int64_t>& dims, const std::string& result = "") {
    Node n;
    n.name = where.name + "/" + op;
    n.op_type = op;
    n.source_index = where.source_index;
    n.inputs = {a, b};
    n.outputs = {result.empty() ? g_.unique_name(where.outputs[0] + "." + op) : result};
    g_.types[n.outputs[0]] = graph::ValueType::of(graph::DataType::f32(), dims);
    out_.push_back(n);
    return n.outputs[0];
  }

  bool rewrite(const Node& w) {
    if (!g_.is_constant(w.inputs[0])) return false;
    const HostTensor& cond = g_.initializers.at(w.inputs[0]);
    std::optional<graph::ValueType> xt = g_.type_of(w.inputs[1]), yt = g_.type_of(w.inputs[2]);
    if (!xt || !yt || xt->dtype != graph::DataType::f32() || yt->dtype != graph::DataType::f32() ||
        !xt->is_concrete() || !yt->is_concrete())
      return false;
    const std::string& y_out = w.outputs[0];
    const std::vector<int64_t> out = g_.type_of(y_out)->dims();
    const std::string base = y_out + ".mask";
    // One side a scalar constant k: the other side, masked, plus k where selected.
    for (int side = 1; side <= 2; ++side) {
      const std::string& k_name = w.inputs[side];
      const std::string& other = w.inputs[3 - side];
      if (!is_f32_scalar(g_, k_name) || g_.is_constant(other)) continue;
      const double k = g_.initializers.at(k_name).f64_at(0);
      const bool k_on_true = side == 1;
      const std::string fill =
          mask_constant(g_, cond, base + ".fill", k_on_true ? k : 0.0, k_on_true ? 0.0 : k);
      if (std::isinf(k)) {
        binary(w, "Add", other, fill, out, y_out);
      } else {
        const std::string keep =
            mask_constant(g_, cond, base + ".keep", k_on_true ? 0.0 : 1.0, k_on_true ? 1.0 : 0.0);
        std::vector<int64_t> kept_dims = broadcast(g_.type_of(other)->dims(), cond.shape());
        binary(w, "Add", binary(w, "Mul", other, keep, kept_dims), fill, out, y_out);
      }
      return true;
    }
    const std::string on = mask_constant(g_, cond, base + ".on", 1.0, 0.0);
    const std::string off = mask_constant(g_, cond, base + ".off", 0.0, 1.0);
    std::string x = binary(w, "Mul", w.inputs[1], on, broadcast(xt->dims(), cond.shape()));
    std::string y = binary(w, "Mul", w.inputs[2], off, broadcast(yt->dims(), cond.shape()));
    binary(w, "Add", x, y, out, y_out);
    return true;
  }

 private:
  Graph& g_;
  std::vector<Node>& out_;
};

}  // namespace

int where_to_arithmetic(Graph& g) {
  int rewritten = 0;
  std::vector<Node> out;
  Rewriter r(g, out);
  for (Node& n : g.nodes) {
    if (n.op_type == "Where" && n.inputs.size() == 3 && r.rewrite(n)) {
      ++rewritten;
      continue;
    }
    out.push_back(std::move(n));
  }
  g.nodes = std::move(out);
  return rewritten;
}

}  // namespace kiln::graph
