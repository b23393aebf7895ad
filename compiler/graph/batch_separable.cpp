#include "compiler/graph/batch_separable.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

namespace kiln::graph {

namespace {

const std::string kRefuse = "cannot run a ranged batch sample by sample: ";

[[noreturn]] void refuse(const std::string& what) {
  throw UserError(kRefuse + what);
}

enum class Kind {
  kUnbatched,  // the same in both graphs: shared by every sample
  kBatched,    // 2k and 3k rows on axis 0, every other axis alike
  kOther,      // neither: refused, or (a folded shape) checked by the rule that reads it
};

struct Info {
  Kind kind = Kind::kUnbatched;
  int64_t k = 0;                     // rows per sample, when batched
  std::vector<int64_t> dims, dims3;  // the shapes at batch 2 and 3
};

Info classify(std::vector<int64_t> d2, std::vector<int64_t> d3) {
  Info v{Kind::kOther, 0, std::move(d2), std::move(d3)};
  if (v.dims == v.dims3) {
    v.kind = Kind::kUnbatched;
  } else if (!v.dims.empty() && v.dims.size() == v.dims3.size() &&
             std::equal(v.dims.begin() + 1, v.dims.end(), v.dims3.begin() + 1) && v.dims[0] > 0 &&
             v.dims[0] % 2 == 0 && v.dims3[0] == v.dims[0] / 2 * 3) {
    v.kind = Kind::kBatched;
    v.k = v.dims[0] / 2;
  }
  return v;
}

// A constant is unbatched when its data is the same in both graphs, and batched when every
// sample's block is the same (a weight expanded to the batch). Any other difference means it
// was folded from the batch size (Range(0, batch)): the program compiled at batch 1 would
// hold another value.
Info classify_constant(const HostTensor& t2, const HostTensor& t3) {
  Info v = classify(t2.shape(), t3.shape());
  const size_t block = v.kind == Kind::kBatched ? t2.nbytes() / 2 : t2.nbytes();
  auto repeats_block = [&](const HostTensor& t, size_t n) {
    if (t.nbytes() != block * n) return false;
    for (size_t i = 1; i < n; ++i)
      if (!std::equal(t.raw() + i * block, t.raw() + (i + 1) * block, t2.raw())) return false;
    return std::equal(t.raw(), t.raw() + block, t2.raw());
  };
  const bool same = t2.dtype() == t3.dtype() &&
                    (v.kind == Kind::kUnbatched ? repeats_block(t3, 1)
                                                : v.kind == Kind::kBatched &&
                                                      repeats_block(t2, 2) && repeats_block(t3, 3));
  if (!same) v.kind = Kind::kOther;
  return v;
}

int64_t norm_axis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// One node as a rule sees it.
struct Site {
  const Graph& g2;
  const Graph& g3;
  const Node& node;           // at batch 2 (the one at batch 3 has the same op and values)
  std::vector<Info> in, out;  // an omitted value is unbatched, without dims

  bool batched(size_t i) const { return i < in.size() && in[i].kind == Kind::kBatched; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(in[i].dims.size()); }
  const std::string& name(size_t i) const { return node.inputs[i]; }
  // A constant input's values in one of the graphs; nullopt when it is computed at run time.
  std::optional<std::vector<int64_t>> ints(size_t i, bool at3 = false) const {
    const auto& inits = (at3 ? g3 : g2).initializers;
    auto it = node.has_input(i) ? inits.find(node.inputs[i]) : inits.end();
    if (it == inits.end()) return std::nullopt;
    return it->second.to_i64();
  }
  int64_t axis(const char* key, int64_t fallback, int64_t rank) const {
    return norm_axis(node.attr_int(key, fallback), rank);
  }
};

// A rule returns "" when the node keeps samples apart, else the reason, worded to follow
// "<file>: node 3 'n' (Op) ". It runs when some input is batched and all batched inputs are
// among its data inputs (OpRule::data); the batched-output check follows it.
using Rule = std::function<std::string(const Site&)>;
struct OpRule {
  Rule rule;
  // The inputs that may carry the batch; the others are parameters that every sample shares
  // (weights, axes, scales, shapes). Empty: any input.
  std::vector<size_t> data;
};

// Broadcasting aligns shapes from the right: an input of the output's rank lines its axis 0
// up with the batch, so it carries the batch with the same k or has one row; an input of
// lower rank never reaches axis 0.
std::string elementwise(const Site& s) {
  const size_t rank = s.out[0].dims.size();
  int64_t k = 0;
  for (size_t i = 0; i < s.in.size(); ++i) {
    const Info& v = s.in[i];
    if (!s.node.has_input(i) || v.dims.size() != rank || rank == 0) {
      if (s.batched(i))
        return "broadcasts batched '" + s.name(i) + "' to a higher rank, off axis 0";
    } else if (v.kind == Kind::kBatched) {
      if (k != 0 && v.k != k) return "combines inputs with different rows per sample";
      k = v.k;
    } else if (v.dims[0] != 1) {
      return "broadcasts '" + s.name(i) + "' along axis 0, the batch";
    }
  }
  return "";
}

// QuantizeLinear, DequantizeLinear: elementwise, but a 1-D scale applies along `axis`.
std::string quantize_linear(const Site& s) {
  if (s.node.has_input(1) && s.rank(1) >= 1 && s.axis("axis", 1, s.rank(0)) == 0)
    return "quantizes with one scale per slice along axis 0, the batch";
  return "";
}

// Convolution, pooling, normalisation over channels and space, resizing: each N on its own,
// with shared weights.
std::string per_sample(const Site& s) {
  if (s.node.attr_int("training_mode", 0) != 0)
    return "normalizes in training mode, with statistics over the whole batch";
  if (s.node.op_type == "MaxPool" && s.node.has_output(1))
    return "gives Indices, which count positions across the whole batch";
  if (s.out[0].dims.empty() || s.out[0].dims[0] != s.in[0].dims[0])
    return "changes the size of axis 0, the batch";
  return "";
}

// Reduce*: the axes are a constant input (normalize.h); none means every axis.
std::string reduce(const Site& s) {
  std::vector<int64_t> axes;
  if (s.node.has_input(1)) {
    auto v = s.ints(1);
    if (!v) return "reduces over axes that are not constant";
    axes = *v;
  }
  if (axes.empty())
    return s.node.attr_int("noop_with_empty_axes", 0)
               ? ""
               : "reduces over every axis, the batch included";
  for (int64_t a : axes)
    if (norm_axis(a, s.rank(0)) == 0) return "reduces over axis 0, the batch";
  return "";
}

// Softmax (before opset 13 too: it flattens from `axis`, which keeps rows apart when the axis
// is not 0), ArgMax, TopK, LayerNormalization (`axis` to the end)...: any axis but the batch.
Rule along_axis(const char* key, int64_t fallback) {
  return [=](const Site& s) -> std::string {
    return s.axis(key, fallback, s.rank(0)) == 0 ? "works along axis 0, the batch" : "";
  };
}

std::string cumsum(const Site& s) {
  auto axis = s.ints(1);
  if (!axis || axis->size() != 1) return "accumulates along an axis that is not constant";
  return norm_axis((*axis)[0], s.rank(0)) == 0 ? "accumulates along axis 0, the batch" : "";
}

std::string mean_variance_normalization(const Site& s) {
  for (int64_t a : s.node.attr_ints("axes", {0, 2, 3}))
    if (norm_axis(a, s.rank(0)) == 0)
      return "normalizes over axis 0, the batch (its default axes are 0, 2, 3)";
  return "";
}

// The last two axes of a MatMul operand are a matrix, the ones before a stack that
// broadcasts from the right. The batch may be A's rows when both are matrices, or axis 0 of
// a stack when the other operand's stack does not reach that axis or has size 1 there. When
// both carry it, both stacks must start with it: same rank, 3 or more.
Rule matmul(size_t a, size_t b) {
  return [=](const Site& s) -> std::string {
    if (s.batched(a) && s.batched(b)) {
      if (s.rank(a) == s.rank(b) && s.rank(a) >= 3) return "";
      return "multiplies batched '" + s.name(a) + "' (rank " + std::to_string(s.rank(a)) +
             ") by batched '" + s.name(b) + "' (rank " + std::to_string(s.rank(b)) +
             "), which pairs samples with each other";
    }
    const size_t x = s.batched(a) ? a : b, y = x == a ? b : a;
    const int64_t rx = s.rank(x), ry = s.rank(y);
    if (rx >= 3 && (ry < rx || (ry == rx && s.in[y].dims[0] == 1))) return "";
    if (x == a && rx == 2 && ry <= 2) return "";  // rows of A, each multiplied on its own
    if (rx >= 2 && ry > rx)
      return "broadcasts batched '" + s.name(x) + "' against the stack of '" + s.name(y) +
             "', moving the batch off axis 0";
    return "contracts over axis 0 of batched '" + s.name(x) + "', the batch";
  };
}

std::string gemm(const Site& s) {
  return s.node.attr_int("transA", 0)
             ? "transposes batched A (transA=1), contracting over the batch"
             : "";
}

std::string transpose(const Site& s) {
  const std::vector<int64_t> perm = s.node.attr_ints("perm");
  const int64_t first = perm.empty() ? s.rank(0) - 1 : norm_axis(perm[0], s.rank(0));
  return first == 0 ? "" : "moves the batch off axis 0 (perm[0] = " + std::to_string(first) + ")";
}

std::string concat(const Site& s) {
  if (s.axis("axis", 0, static_cast<int64_t>(s.out[0].dims.size())) == 0)
    return "concatenates along axis 0, the batch";
  for (size_t i = 0; i < s.in.size(); ++i)
    if (!s.batched(i) || s.in[i].k != s.in[0].k)
      return "concatenates '" + s.name(i) + "', which does not have the batch of its first input";
  return "";
}

std::string split(const Site& s) {
  return s.axis("axis", 0, s.rank(0)) == 0 ? "splits along axis 0, the batch" : "";
}

// Slice: axis 0 may only be taken whole, in both graphs (exporters fold its end from the
// input's shape, so it may differ); the slice of every other axis alike in both.
std::string slice(const Site& s) {
  std::vector<std::array<int64_t, 4>> others[2];
  for (bool at3 : {false, true}) {
    auto starts = s.ints(1, at3), ends = s.ints(2, at3);
    auto axes = s.node.has_input(3) ? s.ints(3, at3) : std::optional<std::vector<int64_t>>{};
    auto steps = s.node.has_input(4) ? s.ints(4, at3) : std::optional<std::vector<int64_t>>{};
    if (!starts || !ends || (s.node.has_input(3) && !axes) || (s.node.has_input(4) && !steps))
      return "slices at positions that are not constant";
    const int64_t rows = at3 ? s.in[0].dims3[0] : s.in[0].dims[0];
    for (size_t j = 0; j < starts->size() && j < ends->size(); ++j) {
      const int64_t axis = norm_axis(axes ? axes->at(j) : static_cast<int64_t>(j), s.rank(0));
      const int64_t start = (*starts)[j], end = (*ends)[j], step = steps ? steps->at(j) : 1;
      if (axis != 0)
        others[at3].push_back({axis, start, end, step});
      else if (step != 1 || norm_axis(start, rows) > 0 || end < rows)
        return "slices axis 0, the batch";
    }
  }
  return others[0] == others[1] ? "" : "slices at positions that depend on the batch size";
}

// Pad: pads are [begins..., ends...] over the listed axes (all of them without `axes`).
std::string pad(const Site& s) {
  std::optional<std::vector<int64_t>> pads = s.ints(1), axes(s.rank(0));
  std::iota(axes->begin(), axes->end(), 0);
  if (s.node.has_input(3)) axes = s.ints(3);
  if (!pads || !axes || pads->size() != 2 * axes->size())
    return "pads by amounts that are not constant";
  for (size_t j = 0; j < axes->size(); ++j)
    if (norm_axis((*axes)[j], s.rank(0)) == 0 &&
        ((*pads)[j] != 0 || (*pads)[j + axes->size()] != 0))
      return "pads axis 0, the batch";
  return "";
}

std::string tile(const Site& s) {
  for (bool at3 : {false, true}) {
    auto repeats = s.ints(1, at3);
    if (!repeats || repeats->empty() || (*repeats)[0] != 1)
      return "repeats along axis 0, the batch";
  }
  return "";
}

// Gather: slices of batched data taken along another axis by shared indices, or rows of a
// shared table (an embedding) taken by batched indices.
std::string gather(const Site& s) {
  const bool axis0 = s.axis("axis", 0, s.rank(0)) == 0;
  if (s.batched(0) && !s.batched(1) && !axis0) return "";
  if (!s.batched(0) && s.batched(1) && axis0) return "";
  if (s.batched(0) && axis0) return "gathers along axis 0, the batch";
  return s.batched(0) ? "gathers from batched data with batched indices, pairing samples"
                      : "places the batch of its indices off axis 0";
}

// GatherElements: output[i][j] reads data at row i (or row index[i][j] along axis 0), so
// data and indices both carry the batch, or the indices pick rows of a shared table.
std::string gather_elements(const Site& s) {
  const bool axis0 = s.axis("axis", 0, s.rank(0)) == 0;
  if (s.batched(0) && s.batched(1) && !axis0) return "";
  if (!s.batched(0) && s.batched(1) && axis0) return "";
  return s.batched(0) && axis0 ? "gathers along axis 0, the batch"
                               : "pairs rows of its indices with rows of its data across samples";
}

// GatherND: index tuples address batched data only below batch_dims; into shared data any
// tuple of batched indices is a lookup of its own.
std::string gather_nd(const Site& s) {
  const int64_t batch_dims = s.node.attr_int("batch_dims", 0);
  if (s.batched(0) && s.batched(1) && batch_dims >= 1) return "";
  if (!s.batched(0) && s.batched(1) && batch_dims == 0) return "";
  return "indexes axis 0 of batched data, the batch (batch_dims = " + std::to_string(batch_dims) +
         ")";
}

std::string trilu(const Site& s) {
  return s.rank(0) >= 3 ? "" : "takes the triangle of a matrix whose rows are the batch";
}

Rule refused(const char* reason) {
  return [=](const Site&) -> std::string { return reason; };
}

const std::map<std::string, OpRule>& rules() {
  static const std::map<std::string, OpRule> table = [] {
    std::map<std::string, OpRule> t;
    const std::vector<size_t> any;
    auto add = [&](std::initializer_list<const char*> ops, const Rule& rule,
                   const std::vector<size_t>& data = {0}) {
      for (const char* op : ops) t.emplace(op, OpRule{rule, data});
    };
    // Elementwise, with numpy broadcasting; Dropout is an identity at inference.
    add({"Abs",  "Acos", "Acosh", "Asin", "Asinh",    "Atan",       "Atanh", "Ceil",  "Cos", "Cosh",
         "Erf",  "Exp",  "Floor", "Log",  "Neg",      "Reciprocal", "Round", "Sign",  "Sin", "Sinh",
         "Sqrt", "Tan",  "Tanh",  "Cast", "Identity", "Dropout",    "IsInf", "IsNaN", "Not"},
        elementwise, any);
    add({"Celu", "Elu", "Gelu", "HardSigmoid", "HardSwish", "LeakyRelu", "Mish", "PRelu", "Relu",
         "Selu", "Shrink", "Sigmoid", "Softplus", "Softsign", "ThresholdedRelu", "Clip"},
        elementwise, any);
    add({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum", "Where", "And",
         "Or", "Xor", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"},
        elementwise, any);
    add({"QuantizeLinear", "DequantizeLinear"}, quantize_linear);
    add({"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool",
         "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "BatchNormalization",
         "InstanceNormalization", "GroupNormalization", "LRN", "DepthToSpace", "SpaceToDepth",
         "Resize"},
        per_sample);
    add({"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
         "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"},
        reduce);
    add({"ArgMax", "ArgMin"}, along_axis("axis", 0));
    add({"Softmax", "LogSoftmax", "Hardmax", "LayerNormalization", "TopK", "LpNormalization"},
        along_axis("axis", -1));
    add({"CumSum"}, cumsum);
    add({"MeanVarianceNormalization"}, mean_variance_normalization);
    add({"MatMul", "MatMulInteger"}, matmul(0, 1), {0, 1});
    add({"QLinearMatMul"}, matmul(0, 3), {0, 3});
    add({"Gemm"}, gemm);
    // Layout: the batched-output check that follows is the whole rule (a Reshape keeps the
    // bytes in order, so each sample stays one block when the output's axis 0 is batched).
    add({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "CastLike", "OneHot"},
        [](const Site&) { return std::string(); });
    add({"Transpose"}, transpose);
    add({"Concat"}, concat, any);
    add({"Split"}, split);
    add({"Slice"}, slice);
    add({"Pad"}, pad);
    add({"Tile"}, tile);
    add({"Gather"}, gather, {0, 1});
    add({"GatherElements"}, gather_elements, {0, 1});
    add({"GatherND"}, gather_nd, {0, 1});
    add({"Trilu"}, trilu);
    add({"DynamicQuantizeLinear"},
        refused("computes one quantization scale over the whole tensor, across samples"));
    add({"LSTM", "GRU", "RNN"},
        refused("is a recurrent layer, not checked for ranged batches (ONNX's default layout "
                "keeps the batch on axis 1)"));
    add({"Einsum"}, refused("is an Einsum, whose equation is not checked for the batch axis"));
    add({"NonZero", "NonMaxSuppression"},
        refused("gives a number of results that depends on every sample's data together"));
    add({"Scatter", "ScatterElements", "ScatterND"},
        refused("scatters by index, which may write across samples"));
    add({"Range"}, refused("generates a sequence whose length depends on the batch"));
    add({"Shape", "Size"}, refused("reads the batch size itself (it should have been folded)"));
    add({"Loop", "If", "Scan"}, refused("has a subgraph, which is not checked for ranged batches"));
    return t;
  }();
  return table;
}

std::string run_rule(const Site& s) {
  auto it = rules().find(s.node.op_type);
  if (it == rules().end()) return "is not known to compute each sample independently";
  const std::vector<size_t>& data = it->second.data;
  for (size_t i = 0; i < s.in.size(); ++i)
    if (s.batched(i) && !data.empty() && std::find(data.begin(), data.end(), i) == data.end())
      return "takes batched '" + s.name(i) + "' as input " + std::to_string(i) +
             ", a parameter that every sample must share";
  return it->second.rule(s);
}

// Inputs that hold shapes, which exporters compute from the input's shape and folding turns
// into constants that differ with the batch size. The rule and the batched-output check
// decide whether the result still keeps samples apart; Expand, Tile and ConstantOfShape may
// also give every sample the same shared content this way.
bool is_shape_input(const std::string& op, size_t i) {
  return (i == 1 && (op == "Reshape" || op == "Expand" || op == "Tile")) ||
         (i == 0 && op == "ConstantOfShape") || (i >= 1 && i <= 4 && op == "Slice") ||
         (i == 3 && op == "Resize");
}
bool broadcasts_shared(const std::string& op) {
  return op == "Expand" || op == "Tile" || op == "ConstantOfShape";
}

void check_same_structure(const Graph& a, const Graph& b) {
  auto differs = [](const std::string& what) {
    refuse("the graph's structure depends on the batch size (" + what + " differs)");
  };
  if (a.inputs != b.inputs) differs("the list of graph inputs");
  if (a.outputs != b.outputs) differs("the list of graph outputs");
  if (a.nodes.size() != b.nodes.size()) differs("the number of nodes");
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &na = a.nodes[i], &nb = b.nodes[i];
    bool same = na.op_type == nb.op_type && na.inputs == nb.inputs && na.outputs == nb.outputs;
    for (const std::string& in : na.inputs) same = same && a.is_constant(in) == b.is_constant(in);
    if (!same) differs(a.describe(na));
  }
}

class Checker {
 public:
  Checker(const Graph& g2, const Graph& g3) : g2_(g2), g3_(g3) {}

  const Info& info(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    Info v = g2_.is_constant(name)
                 ? classify_constant(g2_.initializers.at(name), g3_.initializers.at(name))
                 : classify(dims(g2_, name), dims(g3_, name));
    return values_.emplace(name, std::move(v)).first->second;
  }

  void check_node(size_t index) {
    const Node& n = g2_.nodes[index];
    internal_check(n.epilogue.empty()) << "check_batch_separable runs before fusion";
    Site s{g2_, g3_, n, {}, {}};
    bool any_batched = false;
    for (const std::string& in : n.inputs) {
      s.in.push_back(in.empty() ? Info{} : info(in));
      any_batched |= s.in.back().kind == Kind::kBatched;
    }
    for (const std::string& out : n.outputs) s.out.push_back(out.empty() ? Info{} : info(out));
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (s.in[i].kind == Kind::kOther &&
          !(is_shape_input(n.op_type, i) && (any_batched || broadcasts_shared(n.op_type))))
        refuse(g2_.describe(n) + " reads constant '" + n.inputs[i] +
               "', whose value depends on the batch size and is not the same for every sample");
    if (any_batched) {
      const std::string reason = run_rule(s);
      if (!reason.empty()) refuse(g2_.describe(n) + " " + reason);
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Info& v = s.out[i];
      if (n.outputs[i].empty()) continue;
      const bool ok = any_batched ? v.kind == Kind::kBatched
                                  : v.kind == Kind::kUnbatched ||
                                        (v.kind == Kind::kBatched && broadcasts_shared(n.op_type));
      if (!ok)
        refuse(g2_.describe(n) + " gives '" + n.outputs[i] + "' as " + shapes(v) +
               (any_batched ? ", without the batch as its leading axis"
                            : ", which depends on the batch size"));
    }
  }

  static std::string shapes(const Info& v) {
    return shape_str(v.dims) + " at batch 2 and " + shape_str(v.dims3) + " at batch 3";
  }

 private:
  static std::vector<int64_t> dims(const Graph& g, const std::string& name) {
    std::optional<ValueType> t = g.type_of(name);
    internal_check(t && t->is_concrete())
        << "check_batch_separable: '" << name << "' has no concrete type (run the graph passes)";
    return t->dims();
  }

  const Graph& g2_;
  const Graph& g3_;
  std::map<std::string, Info> values_;
};

}  // namespace

std::vector<bool> check_batch_separable(const Graph& at2, const Graph& at3,
                                        const std::string& symbol) {
  check_same_structure(at2, at3);
  Checker checker(at2, at3);
  std::vector<bool> batched;
  for (const std::string& in : at2.inputs) {
    const Info& v = checker.info(in);
    if (v.kind == Kind::kOther)
      refuse("graph input '" + in + "' is " + Checker::shapes(v) + ": '" + symbol +
             "' must size axis 0 and nothing else");
    batched.push_back(v.kind == Kind::kBatched);
  }
  for (size_t i = 0; i < at2.nodes.size(); ++i) checker.check_node(i);
  for (const std::string& out : at2.outputs) {
    const Info& v = checker.info(out);
    if (v.kind != Kind::kBatched)
      refuse("graph output '" + out + "' is " + Checker::shapes(v) + ", without '" + symbol +
             "' on axis 0 to split it into samples");
  }
  return batched;
}

}  // namespace kiln::graph
