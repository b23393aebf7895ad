#include "compiler/graph/rewrites/lift_1d_to_2d.h"

#include <map>
#include <set>

#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::graph {


namespace {

const std::set<std::string> kWindowed = {"Conv",         "ConvTranspose", "MaxPool",
                                         "AveragePool",  "LpPool",        "GlobalAveragePool",
                                         "GlobalMaxPool"};
// Elementwise nodes that may run on the lifted value: numpy broadcasting gives the same result
// on [N, C, 1, L] as on [N, C, L] when every other operand is lifted too or a scalar.
const std::set<std::string> kElementwise = {
    "Relu",        "LeakyRelu", "Sigmoid", "Tanh", "Erf",      "Gelu", "Silu", "HardSwish",
    "HardSigmoid", "Clip",      "Elu",     "Selu", "Softplus", "Abs",  "Neg",  "Exp",
    "Sqrt",        "Add",       "Sub",     "Mul",  "Div",      "Max",  "Min",  "Pow"};

std::vector<int64_t> with_unit_height(std::vector<int64_t> d) {
  d.insert(d.begin() + 2, 1);
  return d;
}

class Lifter {
 public:
  explicit Lifter(Graph& g) : g_(g) {}

  int run() {
    int lifted = 0;
    std::vector<Node> nodes = std::move(g_.nodes);
    for (Node& n : nodes) {
      if (lift_windowed(n) || lift_batch_norm(n) || lift_elementwise(n)) {
        ++lifted;
        continue;
      }
      out_.push_back(std::move(n));
    }
    g_.nodes = std::move(out_);
    drop_unread_reshapes();
    erase_unread_initializers(g_);
    return lifted;
  }

 private:
  std::optional<std::vector<int64_t>> dims(const std::string& v) const {
    std::optional<ValueType> t = g_.type_of(v);
    if (!t || !t->is_concrete()) return std::nullopt;
    return t->dims();
  }
  bool rank3(const std::string& v) const {
    std::optional<std::vector<int64_t>> d = dims(v);
    return d && d->size() == 3;
  }

  // Appends Reshape(v) -> `result` of shape `to`.
  void reshape(const std::string& v, const std::vector<int64_t>& to, const std::string& result,
               const Node& site) {
    Node r;
    r.name = site.name + "/lift_1d";
    r.op_type = "Reshape";
    r.source_index = site.source_index;
    r.inputs = {v, g_.add_constant(result + ".shape", HostTensor::i64_vector(to))};
    r.outputs = {result};
    g_.types[result] = ValueType::of(g_.type_of(v)->dtype, to);
    out_.push_back(std::move(r));
  }

  // `v` (rank 3) as [N, C, 1, L]: the lifted value a lifted node left, else a new Reshape.
  std::string four_d(const std::string& v, const Node& site) {
    auto it = as_4d_.find(v);
    if (it != as_4d_.end()) return it->second;
    std::string r = g_.unique_name(v + ".2d");
    reshape(v, with_unit_height(*dims(v)), r, site);
    return as_4d_[v] = r;
  }

  // Appends `n` (its first output made 4-D) and the Reshape back to the rank-3 output.
  void emit_lifted(Node n) {
    const std::string y = n.outputs[0];
    const std::vector<int64_t> y_dims = *dims(y);
    const std::string y4 = g_.unique_name(y + ".2d");
    g_.types[y4] = ValueType::of(g_.type_of(y)->dtype, with_unit_height(y_dims));
    n.outputs[0] = y4;
    Node site = n;
    out_.push_back(std::move(n));
    reshape(y4, y_dims, y, site);
    back_.insert(y);
    as_4d_[y] = y4;
  }

  bool lift_windowed(Node n) {
    if (!kWindowed.count(n.op_type) || !rank3(n.inputs[0])) return false;
    if (n.op_type == "MaxPool" && n.has_output(1)) return false;  // indices would change
    // Every check before anything is emitted: a node left alone leaves no Reshape behind.
    const bool has_weight = (n.op_type == "Conv" || n.op_type == "ConvTranspose") && n.has_input(1);
    if (has_weight && !rank3(n.inputs[1])) return false;
    if (n.has_attr("pads") && n.attr_ints("pads").size() != 2) return false;
    n.inputs[0] = four_d(n.inputs[0], n);
    if (has_weight) {
      const std::string& w = n.inputs[1];
      n.inputs[1] = g_.is_constant(w) ? g_.add_constant(w + ".2d", g_.initializers.at(w).reshaped(
                                                                        with_unit_height(*dims(w))))
                                      : four_d(w, n);
    }
    for (const char* key : {"kernel_shape", "strides", "dilations", "output_padding"})
      if (n.has_attr(key)) {
        std::vector<int64_t> v = n.attr_ints(key);
        v.insert(v.begin(), key == std::string("output_padding") ? 0 : 1);
        n.attrs[key] = v;
      }
    if (n.has_attr("output_shape")) {
      std::vector<int64_t> v = n.attr_ints("output_shape");
      v.insert(v.begin(), 1);
      n.attrs["output_shape"] = v;
    }
    if (n.has_attr("pads")) {
      std::vector<int64_t> p = n.attr_ints("pads");  // [begin, end] -> [0, begin, 0, end]
      n.attrs["pads"] = std::vector<int64_t>{0, p[0], 0, p[1]};
    }
    emit_lifted(std::move(n));
    return true;
  }

  bool lift_batch_norm(Node n) {
    if (n.op_type != "BatchNormalization" || n.has_output(1)) return false;
    std::optional<std::vector<int64_t>> x = dims(n.inputs[0]);
    if (!x) return false;
    if (x->size() == 3) {
      n.inputs[0] = four_d(n.inputs[0], n);
      emit_lifted(std::move(n));
      return true;
    }
    if (x->size() != 2) return false;
    // [N, C]: reshaped in and out here (no rank-2 value is passed along).
    const std::string y = n.outputs[0], x4 = g_.unique_name(n.inputs[0] + ".2d");
    reshape(n.inputs[0], {(*x)[0], (*x)[1], 1, 1}, x4, n);
    n.inputs[0] = x4;
    n.outputs[0] = g_.unique_name(y + ".2d");
    g_.types[n.outputs[0]] = g_.types[x4];
    Node site = n;
    const std::string y4 = n.outputs[0];
    out_.push_back(std::move(n));
    reshape(y4, *x, y, site);
    return true;
  }

  bool lift_elementwise(Node n) {
    if (!kElementwise.count(n.op_type) || !as_4d_.count(n.inputs[0]) || !rank3(n.outputs[0]))
      return false;
    for (std::string& v : n.inputs) {
      if (v.empty()) continue;
      if (as_4d_.count(v)) {
        v = as_4d_.at(v);
      } else if (!(g_.is_constant(v) && g_.initializers.at(v).numel() == 1)) {
        return false;
      }
    }
    emit_lifted(std::move(n));
    return true;
  }

  // The Reshapes back to rank 3 that nothing reads once the next nodes took the 4-D value
  // (they read only 4-D values, so dropping one leaves the others' readers as they were).
  void drop_unread_reshapes() {
    std::map<std::string, int> uses = count_uses(g_);
    std::vector<Node> kept;
    for (Node& n : g_.nodes) {
      const std::string& y = n.outputs[0];
      if (back_.count(y) && uses[y] == 0) {
        g_.types.erase(y);
        continue;
      }
      kept.push_back(std::move(n));
    }
    g_.nodes = std::move(kept);
  }

  Graph& g_;
  std::vector<Node> out_;
  std::map<std::string, std::string> as_4d_;  // a rank-3 value -> its [N, C, 1, L] twin
  std::set<std::string> back_;                // rank-3 values the Reshapes back define
};

}  // namespace

int lift_1d_to_2d(Graph& g) {
  return Lifter(g).run();
}

}  // namespace kiln::graph
