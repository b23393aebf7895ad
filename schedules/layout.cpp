#include "schedules/layout.h"

#include "compiler/base/error.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

Values pack_nchwc(const Values& v, int64_t n, int64_t c, int64_t h, int64_t w, int64_t block) {
  const int64_t cb = ceil_div(c, block), hw = h * w;
  Values out(static_cast<size_t>(n * cb * hw * block), 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[((b * cb + ch / block) * hw + p) * block + ch % block] = v[(b * c + ch) * hw + p];
  return out;
}

Values unpack_nchwc(const Values& v, int64_t n, int64_t c, int64_t h, int64_t w, int64_t block) {
  const int64_t cb = ceil_div(c, block), hw = h * w;
  Values out(static_cast<size_t>(n * c * hw));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[(b * c + ch) * hw + p] = v[((b * cb + ch / block) * hw + p) * block + ch % block];
  return out;
}

Values pad_channels(const Values& v, int64_t to) {
  Values out(static_cast<size_t>(to), 0.0f);
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

namespace {

struct LayoutShape {
  int64_t n, c, h, w, block;
  int64_t cb() const { return ceil_div(c, block); }
};

// The types a network holds activations in: f32, the half types of a --dtype region, and
// the 8-bit data between quantized operators.
std::vector<ir::DataType> layout_dtypes() {
  using ir::DataType;
  return {DataType::f32(), DataType::f16(), DataType::bf16(), DataType::u8(), DataType::i8()};
}

// Both directions share the workload form; `direction` tells them apart.
class LayoutTemplate : public OpTemplate {
 public:
  explicit LayoutTemplate(int direction) : dir_(direction) {}
  std::string name() const override {
    return dir_ == 0 ? "layout.nchw_to_nchwc" : "layout.nchwc_to_nchw";
  }
  std::string op() const override { return "layout_transform"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "layout_transform" && w.param_or("direction", 0) == dir_;
  }
  std::vector<ir::DataType> dtypes() const override { return layout_dtypes(); }

  static LayoutShape shape(const Workload& w) {
    LayoutShape s{w.param("N"), w.param("C"), w.param("H"), w.param("W"), w.param("block")};
    user_check(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0)
        << "layout_transform: N, C, H, W must be positive, got " << s.n << ", " << s.c << ", "
        << s.h << ", " << s.w;
    user_check(s.block > 0) << "layout_transform: the channel block must be positive, got "
                            << s.block;
    int64_t d = w.param_or("direction", 0);
    user_check(d == 0 || d == 1) << "layout_transform: direction must be 0 (NCHW -> NCHW[x]c) "
                                 << "or 1 (NCHW[x]c -> NCHW), got " << d;
    return s;
  }

  TensorSpec plain(const LayoutShape& s) const { return {"nchw", {s.n, s.c, s.h, s.w}}; }
  TensorSpec blocked(const LayoutShape& s) const {
    return {"nchwc", {s.n, s.cb(), s.h, s.w, s.block}};
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    LayoutShape s = shape(w);
    return {dir_ == 0 ? plain(s) : blocked(s)};
  }
  TensorSpec output(const Workload& w) const override {
    LayoutShape s = shape(w);
    return dir_ == 0 ? blocked(s) : plain(s);
  }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    LayoutShape s = shape(w);
    return dir_ == 0 ? pack_nchwc(in[0], s.n, s.c, s.h, s.w, s.block)
                     : unpack_nchwc(in[0], s.n, s.c, s.h, s.w, s.block);
  }

  // inner: which axis is innermost and vectorized. Either side of the copy is strided, so
  // both are worth measuring: 0 = the channel lanes (contiguous blocked side), 1 = W
  // (contiguous NCHW side).
  ConfigSpace space(const Workload& w, const Target&) const override {
    shape(w);
    ConfigSpace cs;
    cs.define_knob("inner", {0, 1});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    LayoutShape s = shape(w);
    // Power-of-two blocks vectorize on the blocked side; otherwise run along W.
    bool pow2 = (s.block & (s.block - 1)) == 0 && s.block >= 4;
    // A copy is memory-bound: threads pay off only on large tensors (bytes, not elements).
    bool big = double(s.n * s.cb() * s.block * s.h * s.w) * w.dtype.bytes() > (256 << 10);
    return Config({{"inner", pow2 ? 0 : 1}, {"parallel", big ? 1 : 0}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    LayoutShape s = shape(w);
    const int64_t lanes = t.lanes(w.dtype), bn = s.block, c = s.c;
    te::Tensor in, out;
    if (dir_ == 0) {
      in = te::placeholder({s.n, s.c, s.h, s.w}, w.dtype, "nchw");
      out = te::compute(
          {s.n, s.cb(), s.h, s.w, bn},
          [&](const std::vector<Var>& v) -> Expr {
            Expr ch = v[1] * bn + v[4];
            if (c % bn == 0) return in(v[0], ch, v[2], v[3]);
            // Padded channels read a clamped (valid) address and select zero.
            Expr load = in(v[0], ir::min(ch, Expr(c - 1)), v[2], v[3]);
            return ir::make_select(ch < c, load, ir::make_zero(w.dtype));
          },
          "nchwc");
    } else {
      in = te::placeholder({s.n, s.cb(), s.h, s.w, bn}, w.dtype, "nchwc");
      out = te::compute(
          {s.n, s.c, s.h, s.w},
          [&](const std::vector<Var>& v) -> Expr {
            return in(v[0], v[1] / bn, v[2], v[3], v[1] % bn);
          },
          "nchw");
    }
    te::Schedule sch({out});
    te::Stage st = sch[out];
    IterVar outer = st.fuse(st.fuse(st.axis(0), st.axis(1)), st.axis(2));
    if (dir_ == 0) {
      if (cfg["inner"] == 0) {
        st.vectorize(st.axis(4));
      } else {
        auto [wo, wi] = st.split(st.axis(3), lanes);
        st.reorder({outer, wo, st.axis(4), wi});
        st.vectorize(wi);
      }
    } else {
      auto [wo, wi] = st.split(st.axis(3), lanes);
      if (cfg["inner"] == 0) st.unroll(wi);  // gathers on the blocked side, unrolled
      else st.vectorize(wi);
    }
    if (cfg["parallel"]) st.parallel(outer);

    return logical_kernel(std::move(sch), {in, out}, inputs(w), output(w), 0);
  }

 private:
  int dir_;
};

// NCHW[a]c -> NCHW[b]c in one pass (direction 2, params N, C, H, W, src_block = a, block = b):
// where two kernels of a network block channels differently (tuned configs chose so), the
// value is re-blocked directly instead of through NCHW, one copy instead of two.
class ReblockTemplate : public OpTemplate {
 public:
  std::string name() const override { return "layout.nchwc_to_nchwc"; }
  std::string op() const override { return "layout_transform"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "layout_transform" && w.param_or("direction", 0) == 2;
  }
  std::vector<ir::DataType> dtypes() const override { return layout_dtypes(); }

  struct Shape {
    int64_t n, c, h, w, from, to;
  };
  static Shape shape(const Workload& w) {
    Shape s{w.param("N"), w.param("C"), w.param("H"), w.param("W"), w.param("src_block"),
            w.param("block")};
    user_check(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0)
        << "layout_transform: N, C, H, W must be positive, got " << s.n << ", " << s.c << ", "
        << s.h << ", " << s.w;
    user_check(s.from > 0 && s.to > 0) << "layout_transform: the channel blocks must be "
                                       << "positive, got src_block " << s.from << ", block " << s.to;
    user_check(w.param_or("direction", 0) == 2)
        << "layout.nchwc_to_nchwc needs direction 2 (NCHW[src_block]c -> NCHW[block]c)";
    return s;
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    Shape s = shape(w);
    return {{"src", {s.n, ceil_div(s.c, s.from), s.h, s.w, s.from}}};
  }
  TensorSpec output(const Workload& w) const override {
    Shape s = shape(w);
    return {"dst", {s.n, ceil_div(s.c, s.to), s.h, s.w, s.to}};
  }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    Shape s = shape(w);
    return pack_nchwc(unpack_nchwc(in[0], s.n, s.c, s.h, s.w, s.from), s.n, s.c, s.h, s.w, s.to);
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    shape(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    Shape s = shape(w);
    // Memory-bound like the other copies: threads only for large tensors.
    bool big = double(s.n * s.c * s.h * s.w) * w.dtype.bytes() > (256 << 10);
    return Config({{"parallel", big ? 1 : 0}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    Shape s = shape(w);
    const int64_t from_blocks = ceil_div(s.c, s.from), to_blocks = ceil_div(s.c, s.to);
    te::Tensor in = te::placeholder({s.n, from_blocks, s.h, s.w, s.from}, w.dtype, "src");
    te::Tensor out = te::compute(
        {s.n, to_blocks, s.h, s.w, s.to},
        [&](const std::vector<Var>& v) -> Expr {
          Expr ch = v[1] * s.to + v[4];
          // Padded channels read a clamped (valid) address and select zero.
          Expr c = s.c % s.to == 0 ? ch : ir::min(ch, Expr(s.c - 1));
          Expr load = in(v[0], c / s.from, v[2], v[3], c % s.from);
          return s.c % s.to == 0 ? load : ir::make_select(ch < s.c, load, ir::make_zero(w.dtype));
        },
        "dst");
    te::Schedule sch({out});
    te::Stage st = sch[out];
    IterVar outer = st.fuse(st.fuse(st.axis(0), st.axis(1)), st.axis(2));
    // Contiguous on both sides when one block is a multiple of the other; else a gather.
    st.vectorize(st.axis(4));
    if (cfg["parallel"]) st.parallel(outer);
    return logical_kernel(std::move(sch), {in, out}, inputs(w), output(w), 0);
  }
};

}  // namespace

const OpTemplate& layout_nchw_to_nchwc_template() {
  static const LayoutTemplate t(0);
  return t;
}

const OpTemplate& layout_nchwc_to_nchw_template() {
  static const LayoutTemplate t(1);
  return t;
}

const OpTemplate& layout_nchwc_to_nchwc_template() {
  static const ReblockTemplate t;
  return t;
}

}  // namespace kiln::schedules
