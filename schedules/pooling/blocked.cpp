#include "schedules/pooling/blocked.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/layout.h"
#include "schedules/pooling/pooling.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

// Channel blocks a blocked producer may have written: every conv template's oc_bn (1, 2 or 4
// vectors of 4, 8 or 16 lanes) and the depthwise c_bn. Blocks far wider than C only pad.
std::vector<int64_t> c_bn_choices(int64_t c) {
  std::vector<int64_t> out;
  for (int64_t b : {4, 8, 16, 32, 64})
    if (b < 4 * c || out.empty()) out.push_back(b);
  return out;
}

// The fallback block: one vector, the block the conv fallbacks write most.
int64_t default_block(const Target& t, int64_t c) {
  const std::vector<int64_t> choices = c_bn_choices(c);
  const int64_t lanes = t.lanes(DataType::f32());
  return std::find(choices.begin(), choices.end(), lanes) != choices.end() ? lanes : choices.back();
}

// The logical NCHW argument `spec` in blocks of `block` channels (its pack or unpack).
KernelArg blocked_arg(const TensorSpec& spec, bool is_output, int64_t block) {
  const std::vector<int64_t>& d = spec.shape;
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  KernelArg a{spec, is_output, nullptr, nullptr, n * ceil_div(c, block) * h * w * block};
  if (is_output)
    a.unpack = [=](const Values& v) { return unpack_nchwc(v, n, c, h, w, block); };
  else
    a.pack = [=](const Values& v) { return pack_nchwc(v, n, c, h, w, block); };
  return a;
}

// Parallel chunks only pay above this many window taps (the NCHW templates' threshold).
constexpr double kParallelWork = 2e5;

enum class PoolKind { Max, Avg };

// A blocked pool has its NCHW twin's interface: the same logical arguments, dtypes and
// reference; only the kernel's memory layout differs.
class BlockedTwin : public OpTemplate {
 public:
  std::vector<DataType> dtypes() const override { return nchw().dtypes(); }
  std::vector<TensorSpec> inputs(const Workload& w) const override { return nchw().inputs(w); }
  TensorSpec output(const Workload& w) const override { return nchw().output(w); }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    return nchw().reference(w, in);
  }

 protected:
  virtual const OpTemplate& nchw() const = 0;
};

class BlockedPool2d : public BlockedTwin {
 public:
  explicit BlockedPool2d(PoolKind kind) : kind_(kind) {}
  std::string name() const override { return nchw().op() + ".nchwc"; }
  std::string op() const override { return nchw().op(); }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    PoolShape s = pool_shape(w);
    ConfigSpace cs;
    cs.define_knob("c_bn", c_bn_choices(s.c));
    // Output pixels whose blocks stay in registers across the window.
    cs.define_knob("reg_w", {1, 2, 4, 8});
    // Padding: 0 a select per tap on a clamped load, 1 a padded band of KH rows per row.
    cs.define_knob("pad_rows", {0, 1});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    PoolShape s = pool_shape(w);
    const int64_t block = default_block(t, s.c);
    const double work = double(s.n * ceil_div(s.c, block)) * double(s.out_h() * s.out_w()) *
                        double(s.kh * s.kw) * double(block);
    // Measured on ResNet-18's stem pool (x86-avx512, 1 thread, medians of 5): the select per
    // tap 0.132 ms, the band 0.153 ms (its copy costs more than the selects it saves at 3x3);
    // reg_w 1 to 8 within 1% of each other; the NCHW template 0.444 ms.
    return Config({{"c_bn", block},
                   {"reg_w", s.out_w() >= 4 ? 4 : 1},
                   {"pad_rows", 0},
                   {"parallel", work > kParallelWork ? 1 : 0}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    PoolShape s = pool_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t b = cfg["c_bn"], cb = ceil_div(s.c, b);
    const int64_t oh = s.out_h(), ow = s.out_w();
    const int64_t hp = (oh - 1) * s.sh + s.kh, wp = (ow - 1) * s.sw + s.kw;
    const bool is_max = kind_ == PoolKind::Max;
    Expr pad_value = ir::make_float(f32, is_max ? kMaxPoolPadValue : 0.0);

    te::Tensor x = te::placeholder({s.n, cb, s.h, s.w, b}, w.dtype, "X");
    // The padded input as the windows see it; never stored whole (inlined, or a row band).
    te::Tensor xp = te::compute(
        {s.n, cb, hp, wp, b},
        [&](const std::vector<Var>& v) {
          const Expr y = v[2], xx = v[3];
          Expr inside = y >= s.ph && y < s.h + s.ph && xx >= s.pw && xx < s.w + s.pw;
          // Clamped indices keep the load in bounds on the taps the select discards.
          Expr yc = ir::max(ir::min(y - s.ph, Expr(s.h - 1)), Expr(0));
          Expr xc = ir::max(ir::min(xx - s.pw, Expr(s.w - 1)), Expr(0));
          return ir::make_select(inside, ir::make_cast(f32, x(v[0], v[1], yc, xc, v[4])),
                                 pad_value);
        },
        "X.pad");
    ir::IterVar ry = te::reduce_axis(s.kh, "ry");
    ir::IterVar rx = te::reduce_axis(s.kw, "rx");
    te::Tensor acc = te::compute(
        {s.n, cb, oh, ow, b},
        [&](const std::vector<Var>& v) {
          Expr t = xp(v[0], v[1], v[2] * s.sh + ry->var, v[3] * s.sw + rx->var, v[4]);
          return is_max ? te::max_reduce(t, {ry, rx}) : te::sum(t, {ry, rx});
        },
        "Y.acc");
    te::Tensor y = te::compute(
        {s.n, cb, oh, ow, b},
        [&](const std::vector<Var>& v) {
          Expr r = acc(v[0], v[1], v[2], v[3], v[4]);
          if (!is_max) r = r / ir::make_cast(f32, avg_pool_window_count(s, v[2], v[3]));
          return ir::make_cast(w.dtype, r);
        },
        "Y");

    te::Schedule sch({y});
    te::Stage out = sch[y];
    // Rows of every block as the parallel chunks: a 64-channel pool has only 4 blocks of 16.
    ir::IterVar rows = out.fuse(out.fuse(out.axis(0), out.axis(1)), out.axis(2));
    if (cfg["parallel"]) out.parallel(rows);
    out.vectorize(out.axis(4));
    // One output row's blocks accumulate on the stack; each group of reg_w pixels walks the
    // whole window with its accumulators in registers.
    te::Stage a = sch[acc];
    a.set_scope(ir::MemScope::Local);
    a.compute_at(out, rows);
    auto [jo, ji] = a.split(a.axis(3), cfg["reg_w"]);
    a.reorder({a.axis(0), a.axis(1), a.axis(2), jo, a.reduce_axis(0), a.reduce_axis(1), ji,
               a.axis(4)});
    a.unroll(a.reduce_axis(1));
    a.unroll(ji);
    a.vectorize(a.axis(4));
    te::Stage p = sch[xp];
    if (cfg["pad_rows"]) {
      p.set_scope(ir::MemScope::Local);
      p.compute_at(a, a.axis(2));
      p.vectorize(p.axis(4));
    } else {
      p.compute_inline();
    }

    ScheduledKernel k = logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                                       double(s.n * s.c * oh * ow) * double(s.kh * s.kw));
    k.args = {blocked_arg(inputs(w)[0], false, b), blocked_arg(output(w), true, b)};
    return k;
  }

 private:
  const OpTemplate& nchw() const override {
    return kind_ == PoolKind::Max ? max_pool2d_template() : avg_pool2d_template();
  }
  PoolKind kind_;
};

class BlockedGlobalAvgPool2d : public BlockedTwin {
 public:
  std::string name() const override { return "global_avg_pool2d.nchwc"; }
  std::string op() const override { return "global_avg_pool2d"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    ConfigSpace cs;
    cs.define_knob("c_bn", c_bn_choices(nchw().inputs(w)[0].shape[1]));
    // Interleaved vector accumulators per block: more hide the add latency.
    cs.define_knob("partials", {1, 2, 4});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const TensorSpec in = nchw().inputs(w)[0];
    const int64_t hw = in.shape[2] * in.shape[3];
    return Config({{"c_bn", default_block(t, in.shape[1])},
                   {"partials", hw >= 4 ? 4 : 1},
                   {"parallel", in.elements() > 1 << 16 ? 1 : 0}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    const std::vector<int64_t> d = nchw().inputs(w)[0].shape;
    const DataType f32 = DataType::f32();
    const int64_t b = cfg["c_bn"], cb = ceil_div(d[1], b), hw = d[2] * d[3];
    const int64_t r = cfg["partials"], chunks = ceil_div(hw, r);
    // Each block's pixels as one row of H*W vectors (the same memory as [N, C/b, H, W, b]).
    te::Tensor x = te::placeholder({d[0], cb, hw, b}, w.dtype, "X");
    ir::IterVar rj = te::reduce_axis(chunks, "rj");
    te::Tensor part = te::compute(
        {d[0], cb, r, b},
        [&](Var n, Var c, Var k, Var l) {
          Expr f = rj->var * r + k;
          Expr v = ir::make_cast(f32, x(n, c, ir::min(f, Expr(hw - 1)), l));
          if (hw % r != 0) v = ir::make_select(f < hw, v, ir::make_zero(f32));
          return te::sum(v, {rj});
        },
        "Y.part");
    ir::IterVar rk = te::reduce_axis(r, "rk");
    te::Tensor total = te::compute(
        {d[0], cb, b}, [&](Var n, Var c, Var l) { return te::sum(part(n, c, rk->var, l), {rk}); },
        "Y.sum");
    te::Tensor y = te::compute(
        {d[0], cb, 1, 1, b},
        [&](const std::vector<Var>& v) {
          Expr mean = total(v[0], v[1], v[4]) * ir::make_float(f32, 1.0 / double(hw));
          return ir::make_cast(w.dtype, mean);
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    ir::IterVar blocks = out.fuse(out.axis(0), out.axis(1));
    if (cfg["parallel"]) out.parallel(blocks);
    out.vectorize(out.axis(4));
    te::Stage tot = sch[total];
    tot.set_scope(ir::MemScope::Local);
    tot.compute_at(out, blocks);
    tot.reorder({tot.axis(0), tot.axis(1), tot.reduce_axis(0), tot.axis(2)});
    tot.vectorize(tot.axis(2));
    te::Stage p = sch[part];
    p.set_scope(ir::MemScope::Local);
    p.compute_at(tot, tot.axis(1));
    p.reorder({p.axis(0), p.axis(1), p.reduce_axis(0), p.axis(2), p.axis(3)});
    p.unroll(p.axis(2));
    p.vectorize(p.axis(3));

    ScheduledKernel k = logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                                       double(d[0] * d[1] * hw));
    k.args = {blocked_arg(inputs(w)[0], false, b), blocked_arg(output(w), true, b)};
    return k;
  }

 private:
  const OpTemplate& nchw() const override { return global_avg_pool2d_template(); }
};

}  // namespace

const OpTemplate& max_pool2d_blocked_template() {
  static const BlockedPool2d t(PoolKind::Max);
  return t;
}
const OpTemplate& avg_pool2d_blocked_template() {
  static const BlockedPool2d t(PoolKind::Avg);
  return t;
}
const OpTemplate& global_avg_pool2d_blocked_template() {
  static const BlockedGlobalAvgPool2d t;
  return t;
}

}  // namespace kiln::schedules
