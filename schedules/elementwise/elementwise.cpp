#include "schedules/elementwise/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "compiler/base/error.h"
#include "compiler/ir/simplify.h"
#include "compiler/te/schedule.h"
#include "schedules/math.h"
#include "schedules/run_time_dims.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

ElementwiseOp scale_bias_relu_compute(const ElementwiseShape& s, DataType dtype) {
  user_check(s.rows > 0 && s.cols > 0) << "elementwise: shape must be positive";
  ElementwiseOp op;
  op.a = te::placeholder({s.rows, s.cols}, dtype, "a");
  op.scale = te::placeholder({s.cols}, dtype, "scale");
  op.bias = te::placeholder({s.cols}, dtype, "bias");
  DataType f32 = DataType::f32();
  op.scaled = te::compute(
      {s.rows, s.cols},
      [&](Var i, Var j) {
        return ir::make_cast(f32, op.a(i, j)) * ir::make_cast(f32, op.scale(j)) +
               ir::make_cast(f32, op.bias(j));
      },
      "scaled");
  op.out = te::compute(
      {s.rows, s.cols},
      [&](Var i, Var j) { return ir::make_cast(dtype, ir::max(op.scaled(i, j), ir::make_zero(f32))); },
      "out");
  return op;
}

void scale_bias_relu_reference(const ElementwiseShape& s, const float* a, const float* scale,
                               const float* bias, float* out) {
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j)
      out[i * s.cols + j] = std::max(0.0f, a[i * s.cols + j] * scale[j] + bias[j]);
}

const std::vector<std::string>& elementwise_unary_ops() {
  static const std::vector<std::string> k = {"relu",       "clip",         "sigmoid",
                                             "tanh",       "gelu",         "exp",
                                             "log",        "sqrt",         "neg",
                                             "abs",        "reciprocal",   "erf",
                                             "leaky_relu", "hard_sigmoid", "hard_swish",
                                             "silu",       "not",          "nonzero",
                                             "trunc",      "copy",         "softplus",
                                             "mish",       "elu",          "selu",
                                             "celu",       "softsign",     "thresholded_relu",
                                             "floor",      "ceil",         "round",
                                             "sign",       "sin",          "cos"};
  return k;
}

const std::vector<std::string>& elementwise_binary_ops() {
  static const std::vector<std::string> k = {
      "add",   "sub",  "mul",     "div",        "min",           "max", "pow", "prelu",
      "equal", "less", "greater", "less_equal", "greater_equal", "and", "or",  "xor"};
  return k;
}

const std::vector<std::string>& elementwise_ops() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> all = elementwise_unary_ops();
    for (const std::string& b : elementwise_binary_ops()) all.push_back(b);
    all.push_back("where");
    all.push_back("elementwise_chain");
    return all;
  }();
  return k;
}

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
bool is_unary(const std::string& op) { return contains(elementwise_unary_ops(), op); }
bool is_binary(const std::string& op) { return contains(elementwise_binary_ops(), op); }
// where(a, b, c): b where a is non-zero, else c; it reads two further operands.
bool is_ternary(const std::string& op) { return op == "where"; }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::pair<double, double> clip_bounds(const Workload& w) {
  double lo = w.real_or("lo", 0.0);
  double hi = w.real_or("hi", 6.0);
  user_check(!(lo > hi)) << w.op << ": clip bounds lo > hi (" << lo << " > " << hi << ")";
  return {lo, hi};
}

// The activations' coefficients default to ONNX's, which are f32 attributes: the same values
// a model that states them explicitly carries.
// leaky_relu's slope for x < 0: "alpha", default 0.01.
double leaky_alpha(const Workload& w) { return w.real_or("alpha", 0.01f); }
// hard_sigmoid: max(0, min(1, alpha x + beta)), "alpha"/"beta", ONNX's 0.2 and 0.5.
std::pair<double, double> hard_sigmoid_coefficients(const Workload& w) {
  return {w.real_or("alpha", 0.2f), w.real_or("beta", 0.5f)};
}
// hard_swish is x * hard_sigmoid(x) with ONNX's fixed alpha 1/6 and beta 0.5.
const double kHardSwishAlpha = 1.0 / 6.0;
// elu, celu and thresholded_relu take "alpha" (ONNX's default 1); selu takes "alpha" and
// "gamma", whose defaults are ONNX's (the constants that make SELU self-normalising).
double unit_alpha(const Workload& w) { return w.real_or("alpha", 1.0); }
std::pair<double, double> selu_coefficients(const Workload& w) {
  return {w.real_or("alpha", 1.67326319217681884765625f), w.real_or("gamma", 1.05070102214813232421875f)};
}

double softplus_reference(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

// ONNX Pow as std::pow computes it: exp(y log|x|), negated where x < 0 and y is an odd
// integer, NaN where x < 0 and y is not an integer, and 1 where y is 0 (0^0 included). A
// negative base is common: LayerNorm written out squares x - mean with Pow(d, 2), and
// GPT-2's GELU cubes x.
Expr pow(const Expr& x, const Expr& y) {
  DataType t = x.type();
  auto c = [&](double v) { return ir::make_float(t, v); };
  auto trunc = [&](const Expr& v) { return ir::make_cast(t, ir::make_cast(DataType::i64(), v)); };
  Expr magnitude = math::exp(y * math::log(ir::make_call(t, "fabs", {x})));
  Expr half = trunc(y) * c(0.5);
  Expr odd = trunc(half) != half;
  Expr negative_base =
      ir::make_select(trunc(y) == y, ir::make_select(odd, magnitude * c(-1), magnitude),
                      c(std::numeric_limits<double>::quiet_NaN()));
  return ir::make_select(y == c(0), c(1), ir::make_select(x < c(0), negative_base, magnitude));
}

}  // namespace

Expr elementwise_unary(const std::string& op, const Expr& x, const Workload& w) {
  DataType t = x.type();
  auto c = [&](double v) { return ir::make_float(t, v); };
  if (op == "relu") return ir::max(x, c(0));
  if (op == "clip") {
    auto [lo, hi] = clip_bounds(w);
    return ir::min(ir::max(x, c(lo)), c(hi));
  }
  if (op == "sigmoid") return math::sigmoid(x);
  if (op == "silu") return x * math::sigmoid(x);
  if (op == "tanh") return math::tanh(x);
  if (op == "gelu") return math::gelu(x);
  if (op == "exp") return math::exp(x);
  if (op == "log") return math::log(x);
  if (op == "sqrt") return ir::make_call(t, "sqrt", {x});
  if (op == "neg") return x * c(-1);  // not 0 - x: neg(0) is -0
  if (op == "abs") return ir::make_call(t, "fabs", {x});
  if (op == "reciprocal") return c(1) / x;
  if (op == "erf") return math::erf(x);
  if (op == "leaky_relu") return ir::make_select(x < c(0), x * c(leaky_alpha(w)), x);
  if (op == "hard_sigmoid" || op == "hard_swish") {
    auto [alpha, beta] = op == "hard_swish" ? std::pair{kHardSwishAlpha, 0.5}
                                            : hard_sigmoid_coefficients(w);
    Expr h = ir::min(ir::max(x * c(alpha) + c(beta), c(0)), c(1));
    return op == "hard_swish" ? x * h : h;
  }
  // Truth values are f32 masks (1 or 0), as the comparisons below produce them.
  if (op == "copy") return x;  // with an output shape: a broadcast (ONNX's Expand)
  if (op == "not") return ir::make_select(x == c(0), c(1), c(0));
  if (op == "nonzero") return ir::make_select(x != c(0), c(1), c(0));
  // Toward zero, as ONNX casts float to integer (the result is an integer held in f32).
  if (op == "trunc") return ir::make_cast(t, ir::make_cast(DataType::i64(), x));
  if (op == "softplus") return math::softplus(x);
  if (op == "mish") return math::mish(x);
  if (op == "elu" || op == "celu") {
    const double alpha = unit_alpha(w);
    // celu(x) = max(0, x) + min(0, alpha (e^(x / alpha) - 1)): elu with x scaled by 1 / alpha.
    Expr e = math::exp(op == "celu" ? x * c(1.0 / alpha) : x);
    return ir::make_select(x < c(0), (e - c(1)) * c(alpha), x);
  }
  if (op == "selu") {
    auto [alpha, gamma] = selu_coefficients(w);
    return ir::make_select(x <= c(0), (math::exp(x) - c(1)) * c(alpha * gamma), x * c(gamma));
  }
  if (op == "softsign") return x / (c(1) + ir::make_call(t, "fabs", {x}));
  if (op == "thresholded_relu") return ir::make_select(x > c(unit_alpha(w)), x, c(0));
  if (op == "floor" || op == "ceil") return ir::make_call(t, op, {x});
  if (op == "round") return ir::make_call(t, "round", {x});  // half to even, as ONNX rounds
  if (op == "sign") return ir::make_select(x > c(0), c(1), ir::make_select(x < c(0), c(-1), c(0)));
  if (op == "sin") return math::sin(x);
  if (op == "cos") return math::cos(x);
  user_error() << "unknown unary elementwise op '" << op << "' (valid: "
               << join(elementwise_unary_ops()) << ")";
  return x;
}

Expr elementwise_binary(const std::string& op, const Expr& x, const Expr& y) {
  if (op == "add") return x + y;
  if (op == "sub") return x - y;
  if (op == "mul") return x * y;
  if (op == "div") return x / y;
  if (op == "min") return ir::min(x, y);
  if (op == "max") return ir::max(x, y);
  if (op == "pow") return pow(x, y);
  // ONNX PRelu: y is the slope where x < 0.
  if (op == "prelu") return ir::make_select(x < ir::make_float(x.type(), 0), x * y, x);
  // Comparisons give f32 masks: 1 where they hold, else 0.
  auto mask = [&](const Expr& holds) {
    return ir::make_select(holds, ir::make_float(x.type(), 1), ir::make_float(x.type(), 0));
  };
  if (op == "equal") return mask(x == y);
  if (op == "less") return mask(x < y);
  if (op == "greater") return mask(x > y);
  if (op == "less_equal") return mask(x <= y);
  if (op == "greater_equal") return mask(x >= y);
  // Logic on truth values: any nonzero value is true.
  auto truth = [&](const Expr& v) { return mask(v != ir::make_float(v.type(), 0)); };
  if (op == "and") return truth(x) * truth(y);
  if (op == "or") return ir::max(truth(x), truth(y));
  if (op == "xor") return mask(truth(x) != truth(y));
  user_error() << "unknown binary elementwise op '" << op << "' (valid: "
               << join(elementwise_binary_ops()) << ")";
  return x;
}

double elementwise_unary_reference(const std::string& op, double x, const Workload& w) {
  if (op == "relu") return x > 0 ? x : 0.0;
  if (op == "clip") {
    auto [lo, hi] = clip_bounds(w);
    return std::min(std::max(x, lo), hi);
  }
  if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "silu") return x / (1.0 + std::exp(-x));
  if (op == "tanh") return std::tanh(x);
  if (op == "gelu") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (op == "exp") return std::exp(x);
  if (op == "log") return std::log(x);
  if (op == "sqrt") return std::sqrt(x);
  if (op == "neg") return -x;
  if (op == "abs") return std::fabs(x);
  if (op == "reciprocal") return 1.0 / x;
  if (op == "erf") return std::erf(x);
  if (op == "leaky_relu") return x < 0 ? x * leaky_alpha(w) : x;
  if (op == "hard_sigmoid" || op == "hard_swish") {
    auto [alpha, beta] = op == "hard_swish" ? std::pair{kHardSwishAlpha, 0.5}
                                            : hard_sigmoid_coefficients(w);
    double h = std::min(std::max(x * alpha + beta, 0.0), 1.0);
    return op == "hard_swish" ? x * h : h;
  }
  if (op == "copy") return x;
  if (op == "not") return x == 0 ? 1.0 : 0.0;
  if (op == "nonzero") return x != 0 ? 1.0 : 0.0;
  if (op == "trunc") return std::trunc(x);
  if (op == "softplus") return softplus_reference(x);
  if (op == "mish") return x * std::tanh(softplus_reference(x));
  if (op == "elu") return x < 0 ? unit_alpha(w) * std::expm1(x) : x;
  if (op == "celu")
    return std::max(0.0, x) + std::min(0.0, unit_alpha(w) * std::expm1(x / unit_alpha(w)));
  if (op == "selu") {
    auto [alpha, gamma] = selu_coefficients(w);
    return x <= 0 ? gamma * alpha * std::expm1(x) : gamma * x;
  }
  if (op == "softsign") return x / (1 + std::fabs(x));
  if (op == "thresholded_relu") return x > unit_alpha(w) ? x : 0.0;
  if (op == "floor") return std::floor(x);
  if (op == "ceil") return std::ceil(x);
  if (op == "round") return std::nearbyint(x);  // the default rounding mode: half to even
  if (op == "sign") return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
  if (op == "sin") return std::sin(x);
  if (op == "cos") return std::cos(x);
  user_error() << "unknown unary elementwise op '" << op << "'";
  return x;
}

double elementwise_binary_reference(const std::string& op, double x, double y) {
  if (op == "add") return x + y;
  if (op == "sub") return x - y;
  if (op == "mul") return x * y;
  if (op == "div") return x / y;
  if (op == "min") return std::min(x, y);
  if (op == "max") return std::max(x, y);
  if (op == "pow") return std::pow(x, y);
  if (op == "prelu") return x < 0 ? x * y : x;
  if (op == "equal") return x == y ? 1.0 : 0.0;
  if (op == "less") return x < y ? 1.0 : 0.0;
  if (op == "greater") return x > y ? 1.0 : 0.0;
  if (op == "less_equal") return x <= y ? 1.0 : 0.0;
  if (op == "greater_equal") return x >= y ? 1.0 : 0.0;
  if (op == "and") return x != 0 && y != 0 ? 1.0 : 0.0;
  if (op == "or") return x != 0 || y != 0 ? 1.0 : 0.0;
  if (op == "xor") return (x != 0) != (y != 0) ? 1.0 : 0.0;
  user_error() << "unknown binary elementwise op '" << op << "'";
  return x;
}

namespace {

// What a workload computes: its steps and the logical shapes of its operands and output.
struct ElementwiseForm {
  std::vector<std::string> steps;
  std::vector<std::vector<int64_t>> operands;  // a, b, c, ...: one per binary step, plus a
  std::vector<int64_t> out;

  int64_t elements(const std::vector<int64_t>& s) const {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  }
};

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string operand_name(size_t i) { return std::string(1, static_cast<char>('a' + i)); }

ElementwiseForm form_of(const Workload& w) {
  ElementwiseForm f;
  if (w.op != "elementwise_chain") {
    user_check(is_unary(w.op) || is_binary(w.op) || is_ternary(w.op))
        << "unknown elementwise op '" << w.op << "' (valid: " << join(elementwise_ops()) << ")";
    f.steps.push_back(w.op);
  }
  for (const std::string& e : w.epilogue) f.steps.push_back(e);
  user_check(!f.steps.empty()) << "elementwise_chain: no steps (list them in the epilogue, e.g. "
                                  "add, relu, mul)";
  size_t operands = 1;
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const std::string& s = f.steps[i];
    user_check(is_unary(s) || is_binary(s) || (i == 0 && is_ternary(s)))
        << w.op << ": unknown elementwise step '" << s << "' (valid: "
        << join(elementwise_unary_ops()) << ", " << join(elementwise_binary_ops()) << ")";
    operands += is_ternary(s) ? 2 : is_binary(s) ? 1 : 0;
  }
  user_check(operands <= 26) << w.op << ": at most 25 binary steps, got " << operands - 1;
  int64_t rank = w.param("rank");
  user_check(rank >= 1 && rank <= 8) << w.op << ": rank must be 1..8, got " << rank;
  f.out.assign(rank, 1);
  for (size_t o = 0; o < operands; ++o) {
    std::vector<int64_t> s;
    for (int64_t d = 0; d < rank; ++d) {
      std::string key = operand_name(o) + std::to_string(d);
      int64_t v = w.param(key);
      user_check(v > 0) << w.op << ": dimension " << key << " = " << v << " must be positive";
      s.push_back(v);
    }
    f.operands.push_back(s);
  }
  for (int64_t d = 0; d < rank; ++d) {
    for (const auto& s : f.operands) f.out[d] = std::max(f.out[d], s[d]);
    // An explicit output dimension broadcasts every operand further (copy: Expand).
    f.out[d] = std::max(f.out[d], w.param_or("o" + std::to_string(d), 1));
    for (size_t o = 0; o < operands; ++o)
      user_check(f.operands[o][d] == 1 || f.operands[o][d] == f.out[d])
          << w.op << ": operand " << operand_name(o) << " of shape " << shape_str(f.operands[o])
          << " does not broadcast with " << shape_str(f.operands[0]) << " (dimension " << d
          << ": " << f.operands[o][d] << " vs " << f.out[d] << ")";
  }
  return f;
}

// The output dimensions a kernel takes at run time: d is when the workload names an
// operand's size along d in `run_time` ("a1": operand a's dimension 1). The operands so named
// span d, and must be every operand that spans it at the config's sizes; the others
// broadcast along it (size 1). The value: the variable of the first operand named.
std::vector<std::optional<std::string>> run_time_out_dims(const ElementwiseForm& f,
                                                          const Workload& w) {
  std::vector<std::optional<std::string>> dims(f.out.size());
  for (size_t d = 0; d < f.out.size(); ++d)
    for (size_t o = 0; o < f.operands.size() && !dims[d]; ++o)
      if (w.at_run_time(operand_name(o) + std::to_string(d)))
        dims[d] = operand_name(o) + std::to_string(d);
  for (size_t d = 0; d < f.out.size(); ++d) {
    if (!dims[d]) continue;
    for (size_t o = 0; o < f.operands.size(); ++o) {
      const std::string name = operand_name(o) + std::to_string(d);
      if (w.at_run_time(name))
        user_check(f.operands[o][d] == f.out[d])
            << w.str() << ": " << name << " is taken at run time, but operand " << operand_name(o)
            << " broadcasts along dimension " << d;
      else
        user_check(f.operands[o][d] == 1)
            << w.str() << ": operand " << operand_name(o) << " spans dimension " << d << ", which "
            << *dims[d] << " takes at run time; name " << name << " too";
    }
  }
  return dims;
}

// The loop nest the kernel runs: the output's dimensions with size-1 ones dropped and
// neighbours merged wherever every operand either spans both or is broadcast along both.
// Same shapes collapse to one flat loop, a scalar operand to one that never moves, a
// trailing broadcast ([M, N] x [N]) to two loops whose inner one reads the small operand
// contiguously; only irreducible patterns keep more loops. No loop needs a div or mod.
// A dimension taken at run time is never dropped: its extents multiply in as a variable.
struct LoopPlan {
  std::vector<int64_t> dims;             // at the workload's sizes (config choices)
  std::vector<Expr> extents;             // what the kernel loops over
  std::vector<std::vector<bool>> spans;  // [operand][dim]: true when it varies along dim
};

LoopPlan plan_loops(const ElementwiseForm& f, const Workload& w, const RunTimeDims& run_time) {
  const std::vector<std::optional<std::string>> run_time_dims = run_time_out_dims(f, w);
  LoopPlan p;
  p.spans.resize(f.operands.size());
  std::vector<bool> last;
  for (size_t d = 0; d < f.out.size(); ++d) {
    const std::optional<std::string>& var = run_time_dims[d];
    if (f.out[d] == 1 && !var) continue;
    const Expr extent = var ? run_time.extent(*var) : Expr(f.out[d]);
    std::vector<bool> pattern;
    for (size_t o = 0; o < f.operands.size(); ++o)
      pattern.push_back(var ? w.at_run_time(operand_name(o) + std::to_string(d))
                            : f.operands[o][d] == f.out[d]);
    if (!p.dims.empty() && pattern == last) {
      p.dims.back() *= f.out[d];
      p.extents.back() = ir::simplify(p.extents.back() * extent);
      continue;
    }
    p.dims.push_back(f.out[d]);
    p.extents.push_back(extent);
    for (size_t o = 0; o < pattern.size(); ++o) p.spans[o].push_back(pattern[o]);
    last = pattern;
  }
  if (p.dims.empty()) {  // one element
    p.dims.push_back(1);
    p.extents.push_back(Expr(1));
    for (auto& s : p.spans) s.push_back(true);
  }
  return p;
}

const int64_t kNever = -1;

class ElementwiseFlat : public OpTemplate {
 public:
  explicit ElementwiseFlat(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "elementwise.flat." + op_; }
  std::string op() const override { return op_; }

  bool applies(const Workload& w, const Target&) const override {
    return w.op == op_ && (w.dtype == DataType::f32() || w.dtype == DataType::f16() ||
                           w.dtype == DataType::bf16());
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    form_of(w);
    ConfigSpace cs;
    // Vectors per inner iteration: more independent work for the out-of-order core.
    cs.define_knob("vec_unroll", {1, 2, 4, 8});
    // Bytes moved (all operands + output) below which the kernel stays on one thread:
    // waking the pool costs microseconds, a small tensor takes less. -1: never parallel.
    cs.define_knob("parallel_bytes", {0, 16 << 10, 64 << 10, 256 << 10, 1 << 20, kNever});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    form_of(w);
    int lanes = t.lanes(DataType::f32());
    // Two zmm per iteration with AVX-512, four ymm / q registers elsewhere: enough
    // independent vectors to hide load latency, small enough for the short tensors.
    int64_t unroll = lanes >= 16 ? 2 : 4;
    return Config({{"vec_unroll", unroll}, {"parallel_bytes", 64 << 10}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    ElementwiseForm f = form_of(w);
    std::vector<TensorSpec> in;
    for (size_t o = 0; o < f.operands.size(); ++o) in.push_back({operand_name(o), f.operands[o]});
    return in;
  }

  TensorSpec output(const Workload& w) const override { return {"out", form_of(w).out}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    ElementwiseForm f = form_of(w);
    int64_t n = f.elements(f.out), rank = static_cast<int64_t>(f.out.size());
    Values out(n);
    std::vector<int64_t> idx(rank);
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t r = flat;
      for (int64_t d = rank - 1; d >= 0; --d) idx[d] = r % f.out[d], r /= f.out[d];
      auto value = [&](size_t o) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d)
          off = off * f.operands[o][d] + (f.operands[o][d] == 1 ? 0 : idx[d]);
        return static_cast<double>(in[o][off]);
      };
      double v = value(0);
      size_t next = 1;
      for (const std::string& s : f.steps) {
        if (is_ternary(s)) {
          v = v != 0 ? value(next) : value(next + 1);
          next += 2;
          continue;
        }
        v = is_unary(s) ? elementwise_unary_reference(s, v, w)
                        : elementwise_binary_reference(s, v, value(next++));
      }
      out[flat] = static_cast<float>(v);
    }
    return out;
  }

  // The epilogue lists further steps of the chain: any unary or binary op.
  std::vector<std::string> epilogues() const override {
    std::vector<std::string> steps = elementwise_unary_ops();
    for (const std::string& b : elementwise_binary_ops()) steps.push_back(b);
    return steps;
  }
  // clip's bounds and the activations' coefficients are reals and may be negative.
  std::vector<std::string> value_params() const override {
    return {"lo", "hi", "alpha", "beta", "gamma"};
  }
  // Any operand's size along any dimension (run_time_out_dims says which must go together).
  std::vector<std::string> run_time_params() const override {
    std::vector<std::string> names;
    for (size_t o = 0; o < 26; ++o)
      for (int d = 0; d < 8; ++d) names.push_back(operand_name(o) + std::to_string(d));
    return names;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    ElementwiseForm f = form_of(w);
    RunTimeDims run_time(w);
    LoopPlan plan = plan_loops(f, w, run_time);
    const DataType f32 = DataType::f32();
    const size_t rank = plan.dims.size();

    std::vector<te::Tensor> operands;
    for (size_t o = 0; o < f.operands.size(); ++o) {
      std::vector<Expr> shape;
      for (size_t d = 0; d < rank; ++d)
        shape.push_back(plan.spans[o][d] ? plan.extents[d] : Expr(1));
      operands.push_back(te::placeholder(shape, w.dtype, operand_name(o)));
    }
    const std::vector<Expr>& out_shape = plan.extents;
    te::Tensor out = te::compute(
        out_shape,
        [&](const std::vector<Var>& iv) {
          auto load = [&](size_t o) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < rank; ++d)
              idx.push_back(plan.spans[o][d] ? Expr(iv[d]) : Expr(0));
            return ir::make_cast(f32, operands[o](idx));
          };
          Expr v = load(0);
          size_t next = 1;
          for (const std::string& s : f.steps) {
            if (is_ternary(s)) {
              v = ir::make_select(v != ir::make_float(f32, 0), load(next), load(next + 1));
              next += 2;
              continue;
            }
            v = is_unary(s) ? elementwise_unary(s, v, w) : elementwise_binary(s, v, load(next++));
          }
          return ir::make_cast(w.dtype, v);
        },
        "out");

    te::Schedule sch({out});
    te::Stage st = sch[out];
    const int64_t lanes = t.lanes(f32), unroll = cfg["vec_unroll"];
    auto [xo, xi] = st.split(st.axis(rank - 1), lanes * unroll);
    auto [xv, xl] = st.split(xi, lanes);
    st.vectorize(xl);
    if (unroll > 1) st.unroll(xv);

    int64_t elements = f.elements(f.out), bytes = elements;
    for (const auto& s : f.operands) bytes += f.elements(s);
    bytes *= w.dtype.bytes();
    int64_t threshold = cfg["parallel_bytes"];
    if (threshold != kNever && bytes >= threshold) {
      // The outermost loop with enough iterations to share; the runtime splits it in ranges.
      std::vector<std::pair<ir::IterVar, int64_t>> loops;
      for (size_t d = 0; d + 1 < rank; ++d) loops.push_back({st.axis(d), plan.dims[d]});
      loops.push_back({xo, (plan.dims.back() + lanes * unroll - 1) / (lanes * unroll)});
      auto pick = loops.front();
      for (const auto& l : loops)
        if (l.second > pick.second) pick = l;
      for (const auto& l : loops)
        if (l.second >= 8) {
          pick = l;
          break;
        }
      if (pick.second > 1) st.parallel(pick.first);
    }

    std::vector<te::Tensor> args = operands;
    args.push_back(out);
    std::vector<TensorSpec> specs;
    for (size_t o = 0; o < f.operands.size(); ++o)
      specs.push_back({operand_name(o), f.operands[o]});
    ScheduledKernel k =
        logical_kernel(std::move(sch), args, specs, {"out", f.out},
                       static_cast<double>(elements) * static_cast<double>(f.steps.size()));
    run_time.attach(k);
    return k;
  }

 private:
  std::string op_;
};

}  // namespace

const OpTemplate& elementwise_flat_template(const std::string& op) {
  return family_template<ElementwiseFlat>(elementwise_ops(), op, "elementwise");
}

}  // namespace kiln::schedules
