#include "schedules/pooling/pooling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

enum class PoolKind { Max, Avg };

// A max is exact in any type, so max pools also take the 8-bit data of quantized models (the
// QDQ form's DequantizeLinear -> MaxPool -> QuantizeLinear of one quantization); an average
// would need its own rounding.
std::vector<DataType> pool_dtypes(PoolKind kind) {
  std::vector<DataType> k = {DataType::f32(), DataType::f16(), DataType::bf16()};
  if (kind == PoolKind::Max) k.insert(k.end(), {DataType::u8(), DataType::i8()});
  return k;
}

int64_t pooled_extent(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t span = in + 2 * p - k;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // PyTorch/ONNX: the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

}  // namespace

int64_t PoolShape::out_h() const { return pooled_extent(h, kh, sh, ph, ceil_mode); }
int64_t PoolShape::out_w() const { return pooled_extent(w, kw, sw, pw, ceil_mode); }

PoolShape pool_shape(const Workload& w) {
  PoolShape s{w.param("N"), w.param("C"), w.param("H"), w.param("W"), w.param("KH"),
              w.param("KW"), w.param_or("SH", 1), w.param_or("SW", 1), w.param_or("PH", 0),
              w.param_or("PW", 0)};
  s.ceil_mode = w.param_or("ceil_mode", 0) != 0;
  s.count_include_pad = w.param_or("count_include_pad", 0) != 0;
  user_check(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0)
      << w.op << ": N, C, H, W must be positive in " << w.str();
  user_check(s.kh > 0 && s.kw > 0 && s.sh > 0 && s.sw > 0)
      << w.op << ": kernel and stride must be positive in " << w.str();
  user_check(s.ph >= 0 && s.pw >= 0 && 2 * s.ph <= s.kh && 2 * s.pw <= s.kw)
      << w.op << ": padding must be in [0, kernel/2] (PH <= KH/2, PW <= KW/2) in " << w.str();
  user_check(s.kh <= s.h + 2 * s.ph && s.kw <= s.w + 2 * s.pw)
      << w.op << ": the " << s.kh << "x" << s.kw << " window is larger than the padded "
      << s.h + 2 * s.ph << "x" << s.w + 2 * s.pw << " input in " << w.str();
  return s;
}

Expr avg_pool_window_count(const PoolShape& s, Expr i, Expr j) {
  Expr h0 = i * s.sh - s.ph, w0 = j * s.sw - s.pw;
  Expr h1 = ir::min(h0 + s.kh, Expr(s.h + s.ph)), w1 = ir::min(w0 + s.kw, Expr(s.w + s.pw));
  if (!s.count_include_pad) {
    h0 = ir::max(h0, Expr(0)), w0 = ir::max(w0, Expr(0));
    h1 = ir::min(h1, Expr(s.h)), w1 = ir::min(w1, Expr(s.w));
  }
  return (h1 - h0) * (w1 - w0);
}

namespace {

class Pool2d : public OpTemplate {
 public:
  explicit Pool2d(PoolKind kind) : kind_(kind) {}
  std::string name() const override {
    return kind_ == PoolKind::Max ? "max_pool2d.nchw" : "avg_pool2d.nchw";
  }
  std::string op() const override { return kind_ == PoolKind::Max ? "max_pool2d" : "avg_pool2d"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }

  ConfigSpace space(const Workload& w, const Target&) const override {
    PoolShape s = pool_shape(w);
    ConfigSpace cs;
    // Output pixels per register accumulator, in vectors of the f32 width; 0: scalar.
    cs.define_knob("vec_w", {0, 1, 2});
    // Padding: 0 inlined as a select on every read, 1 a padded row band on the stack.
    cs.define_knob("pad_rows", {0, 1});
    cs.define_knob("unroll_kw", s.kw <= 8 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    PoolShape s = pool_shape(w);
    bool padded = s.ph > 0 || s.pw > 0 || s.ceil_mode;
    double work = double(s.n * s.c) * double(s.out_h() * s.out_w()) * double(s.kh * s.kw);
    return Config({{"vec_w", s.out_w() >= 8 ? 1 : 0},
                   {"pad_rows", padded ? 1 : 0},
                   {"unroll_kw", s.kw <= 8 ? 1 : 0},
                   {"parallel", work > 2e5 && s.n * s.c > 1 ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    PoolShape s = pool_shape(w);
    return {{"X", {s.n, s.c, s.h, s.w}}};
  }
  TensorSpec output(const Workload& w) const override {
    PoolShape s = pool_shape(w);
    return {"Y", {s.n, s.c, s.out_h(), s.out_w()}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    PoolShape s = pool_shape(w);
    const int64_t oh = s.out_h(), ow = s.out_w();
    Values out(static_cast<size_t>(s.n * s.c * oh * ow));
    const float* x = in[0].data();
    for (int64_t p = 0; p < s.n * s.c; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t h0 = i * s.sh - s.ph, w0 = j * s.sw - s.pw;
          int64_t h1 = std::min(h0 + s.kh, s.h + s.ph), w1 = std::min(w0 + s.kw, s.w + s.pw);
          double padded_count = double((h1 - h0) * (w1 - w0));
          h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
          h1 = std::min(h1, s.h), w1 = std::min(w1, s.w);
          double acc = kind_ == PoolKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t y = h0; y < h1; ++y)
            for (int64_t xx = w0; xx < w1; ++xx) {
              double v = x[(p * s.h + y) * s.w + xx];
              acc = kind_ == PoolKind::Max ? std::max(acc, v) : acc + v;
            }
          if (kind_ == PoolKind::Avg)
            acc /= s.count_include_pad ? padded_count : double((h1 - h0) * (w1 - w0));
          out[static_cast<size_t>((p * oh + i) * ow + j)] = static_cast<float>(acc);
        }
    return out;
  }

  std::vector<DataType> dtypes() const override { return pool_dtypes(kind_); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    PoolShape s = pool_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t oh = s.out_h(), ow = s.out_w();
    // The padded input the windows read: rows and columns up to the last window's end.
    const int64_t hp = (oh - 1) * s.sh + s.kh, wp = (ow - 1) * s.sw + s.kw;
    const bool is_max = kind_ == PoolKind::Max;
    Expr pad_value = ir::make_float(f32, is_max ? kMaxPoolPadValue : 0.0);

    te::Tensor x = te::placeholder({s.n, s.c, s.h, s.w}, w.dtype, "X");
    te::Tensor xp = te::compute(
        {s.n, s.c, hp, wp},
        [&](Var n, Var c, Var y, Var xx) {
          Expr inside = y >= s.ph && y < s.h + s.ph && xx >= s.pw && xx < s.w + s.pw;
          // Clamped indices keep the load in bounds on the lanes the select discards.
          Expr yy = ir::max(ir::min(y - s.ph, Expr(s.h - 1)), Expr(0));
          Expr xc = ir::max(ir::min(xx - s.pw, Expr(s.w - 1)), Expr(0));
          return ir::make_select(inside, ir::make_cast(f32, x(n, c, yy, xc)), pad_value);
        },
        "X.pad");
    ir::IterVar ry = te::reduce_axis(s.kh, "ry");
    ir::IterVar rx = te::reduce_axis(s.kw, "rx");
    te::Tensor acc = te::compute(
        {s.n, s.c, oh, ow},
        [&](Var n, Var c, Var i, Var j) {
          Expr v = xp(n, c, i * s.sh + ry->var, j * s.sw + rx->var);
          return is_max ? te::max_reduce(v, {ry, rx}) : te::sum(v, {ry, rx});
        },
        "Y.acc");
    te::Tensor y = te::compute(
        {s.n, s.c, oh, ow},
        [&](Var n, Var c, Var i, Var j) {
          Expr v = acc(n, c, i, j);
          if (!is_max) v = v / ir::make_cast(f32, avg_pool_window_count(s, i, j));
          return ir::make_cast(w.dtype, v);
        },
        "Y");

    te::Schedule sch({y});
    te::Stage out = sch[y];
    ir::IterVar nc = out.fuse(out.axis(0), out.axis(1));
    if (cfg["parallel"]) out.parallel(nc);
    ir::IterVar row = out.axis(2);
    const int64_t lanes = t.lanes(f32);
    auto [jo, jl] = out.split(out.axis(3), lanes);
    out.vectorize(jl);
    // One output row accumulates in a stack row buffer; for each vector of output pixels
    // the whole window is walked with that vector's address fixed, so LLVM keeps it in
    // registers across the taps.
    te::Stage a = sch[acc];
    a.set_scope(ir::MemScope::Local);
    a.compute_at(out, row);
    if (cfg["vec_w"] > 0) {
      auto [ajo, aji] = a.split(a.axis(3), lanes * cfg["vec_w"]);
      auto [av, al] = a.split(aji, lanes);
      a.reorder({a.axis(0), a.axis(1), a.axis(2), ajo, a.reduce_axis(0), a.reduce_axis(1), av, al});
      a.unroll(av);
      a.vectorize(al);
    }
    if (cfg["unroll_kw"]) a.unroll(a.reduce_axis(1));
    te::Stage p = sch[xp];
    if (cfg["pad_rows"]) {
      // The KH padded rows one output row reads, once, instead of a select per window tap.
      p.set_scope(ir::MemScope::Local);
      p.compute_at(a, a.axis(2));
      auto [po, pi] = p.split(p.axis(3), lanes);
      p.vectorize(pi);
    } else {
      p.compute_inline();
    }

    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                          double(s.n * s.c * oh * ow) * double(s.kh * s.kw));
  }

 private:
  PoolKind kind_;
};

class GlobalAvgPool2d : public OpTemplate {
 public:
  std::string name() const override { return "global_avg_pool2d.nchw"; }
  std::string op() const override { return "global_avg_pool2d"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }

  static std::array<int64_t, 4> shape(const Workload& w) {
    std::array<int64_t, 4> s = {w.param("N"), w.param("C"), w.param("H"), w.param("W")};
    user_check(s[0] > 0 && s[1] > 0 && s[2] > 0 && s[3] > 0)
        << w.op << ": N, C, H, W must be positive in " << w.str();
    return s;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    shape(w);
    int64_t lanes = t.lanes(DataType::f32());
    ConfigSpace cs;
    // Interleaved partial sums per plane: 1 is a plain scalar sum.
    cs.define_knob("partials", {1, lanes, 2 * lanes});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    auto s = shape(w);
    int64_t lanes = t.lanes(DataType::f32());
    int64_t hw = s[2] * s[3];
    return Config({{"partials", hw >= lanes ? lanes : 1},
                   {"parallel", s[0] * s[1] * hw > 1 << 16 ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    auto s = shape(w);
    return {{"X", {s[0], s[1], s[2], s[3]}}};
  }
  TensorSpec output(const Workload& w) const override {
    auto s = shape(w);
    return {"Y", {s[0], s[1], 1, 1}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    auto s = shape(w);
    const int64_t hw = s[2] * s[3];
    Values out(static_cast<size_t>(s[0] * s[1]));
    for (int64_t p = 0; p < s[0] * s[1]; ++p) {
      double acc = 0;
      for (int64_t i = 0; i < hw; ++i) acc += in[0][static_cast<size_t>(p * hw + i)];
      out[static_cast<size_t>(p)] = static_cast<float>(acc / double(hw));
    }
    return out;
  }

  std::vector<DataType> dtypes() const override { return pool_dtypes(PoolKind::Avg); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    auto s = shape(w);
    const DataType f32 = DataType::f32();
    const int64_t hw = s[2] * s[3], r = cfg["partials"];
    const int64_t chunks = (hw + r - 1) / r;
    // Each plane as one contiguous row of H*W (the same memory as [N, C, H, W]).
    te::Tensor x = te::placeholder({s[0], s[1], hw}, w.dtype, "X");
    ir::IterVar rj = te::reduce_axis(chunks, "rj");
    te::Tensor part = te::compute(
        {s[0], s[1], r},
        [&](Var n, Var c, Var l) {
          Expr f = rj->var * r + l;
          Expr v = ir::make_cast(f32, x(n, c, ir::min(f, Expr(hw - 1))));
          if (hw % r != 0) v = ir::make_select(f < hw, v, ir::make_zero(f32));
          return te::sum(v, {rj});
        },
        "Y.part");
    ir::IterVar rl = te::reduce_axis(r, "rl");
    te::Tensor total = te::compute(
        {s[0], s[1]}, [&](Var n, Var c) { return te::sum(part(n, c, rl), {rl}); }, "Y.sum");
    te::Tensor y = te::compute(
        {s[0], s[1], 1, 1},
        [&](Var n, Var c, Var, Var) {
          return ir::make_cast(w.dtype, total(n, c) * ir::make_float(f32, 1.0 / double(hw)));
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    ir::IterVar nc = out.fuse(out.axis(0), out.axis(1));
    if (cfg["parallel"]) out.parallel(nc);
    te::Stage tot = sch[total];
    tot.set_scope(ir::MemScope::Local);
    tot.compute_at(out, nc);
    te::Stage p = sch[part];
    p.set_scope(ir::MemScope::Local);
    p.compute_at(tot, tot.axis(1));
    if (r > 1) {
      p.reorder({p.axis(0), p.axis(1), p.reduce_axis(0), p.axis(2)});
      p.vectorize(p.axis(2));
    }

    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(s[0] * s[1] * hw));
  }
};

}  // namespace

const OpTemplate& max_pool2d_template() {
  static const Pool2d t(PoolKind::Max);
  return t;
}
const OpTemplate& avg_pool2d_template() {
  static const Pool2d t(PoolKind::Avg);
  return t;
}
const OpTemplate& global_avg_pool2d_template() {
  static const GlobalAvgPool2d t;
  return t;
}

}  // namespace kiln::schedules
