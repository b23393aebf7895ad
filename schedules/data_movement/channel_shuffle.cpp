#include "schedules/data_movement/channel_shuffle.h"

#include <numeric>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/te/schedule.h"
#include "schedules/data_movement/data_movement.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Stmt;
using ir::Var;

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string numbered(const char* prefix, size_t i) {
  return std::string(prefix).append(std::to_string(i));
}

// The workload, checked, and where each run of the shuffle reads.
struct ShuffleShape {
  int64_t n = 0, hw = 0, group = 0, block = 0;
  std::vector<int64_t> channels, blocks;      // per input
  int64_t c = 0;                              // all channels
  int64_t run = 0;                            // C / g: the channels of one run
  std::vector<int64_t> run_input, run_first;  // per run r: its input, its first channel there

  // Elements of one image of input i, and of the output.
  int64_t input_elements(size_t i) const {
    return ceil_div(channels[i], blocks[i]) * hw * blocks[i];
  }
  int64_t output_elements() const { return c * hw; }
  // Lanes of one run per output vector on the interleaving path (0: that path does not apply).
  int64_t lanes_per_run() const {
    if (block % group != 0 || block / group < 2) return 0;
    const int64_t m = block / group;
    if (run % m != 0) return 0;
    for (int64_t b : blocks)
      if (b % m != 0) return 0;
    return m;
  }
};

ShuffleShape shuffle_shape(const Workload& w) {
  ShuffleShape s;
  s.n = w.param("N"), s.hw = w.param("HW"), s.group = w.param("group"), s.block = w.param("block");
  const int64_t k = w.param("inputs");
  user_check(s.n > 0 && s.hw > 0 && s.group > 0 && s.block > 0)
      << "channel_shuffle: N, HW, group and block must be positive in " << w.str();
  user_check(k >= 1 && k <= kMaxConcatInputs)
      << "channel_shuffle: inputs must be 1.." << kMaxConcatInputs << ", got " << k << " in "
      << w.str();
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t e = w.param(numbered("E", i)), b = w.param(numbered("B", i));
    user_check(e > 0 && b > 0) << "channel_shuffle: E" << i << " and B" << i
                               << " must be positive in " << w.str();
    offsets.push_back(s.c);
    s.channels.push_back(e), s.blocks.push_back(b);
    s.c += e;
  }
  user_check(s.c % s.group == 0) << "channel_shuffle: " << s.c << " channels do not divide into "
                                 << s.group << " groups in " << w.str();
  user_check(s.c % s.block == 0) << "channel_shuffle: " << s.c
                                 << " channels do not divide into blocks of " << s.block << " in "
                                 << w.str();
  s.run = s.c / s.group;
  for (int64_t r = 0; r < s.group; ++r) {
    const int64_t first = r * s.run;
    size_t i = 0;
    while (i + 1 < offsets.size() && offsets[i + 1] <= first) ++i;
    user_check(first + s.run <= offsets[i] + s.channels[i])
        << "channel_shuffle: run " << r << " (channels " << first << ".." << first + s.run - 1
        << ") spans two inputs in " << w.str() << "; every input must begin at a multiple of "
        << s.run;
    s.run_input.push_back(static_cast<int64_t>(i));
    s.run_first.push_back(first - offsets[i]);
  }
  return s;
}

// The flat index in one image of channel `ch` at pixel `p`, blocks of `block` channels.
Expr at(const Expr& ch, const Expr& p, int64_t hw, int64_t block) {
  if (block == 1) return ch * Expr(hw) + p;
  return (ch / Expr(block) * Expr(hw) + p) * Expr(block) + ch % Expr(block);
}

// The g vectors of m lanes, one per run, as one vector of g * m lanes whose lane j is lane
// j / g of run j % g: the runs concatenated into two halves, then one two-input shuffle.
Expr interleave(std::vector<Expr> runs) {
  const int g = static_cast<int>(runs.size());
  if (g == 1) return runs.front();
  const int m = runs.front().type().lanes;
  auto concat_all = [](std::vector<Expr> v) {
    while (v.size() > 1) {
      std::vector<Expr> next;
      for (size_t i = 0; i < v.size(); i += 2) {
        std::vector<int> lanes(2 * v[i].type().lanes);
        std::iota(lanes.begin(), lanes.end(), 0);
        next.push_back(ir::make_shuffle(v[i], v[i + 1], lanes));
      }
      v = std::move(next);
    }
    return v.front();
  };
  Expr lo = concat_all({runs.begin(), runs.begin() + g / 2});
  Expr hi = concat_all({runs.begin() + g / 2, runs.end()});
  std::vector<int> lanes(g * m);
  for (int j = 0; j < g * m; ++j) lanes[j] = (j % g) * m + j / g;
  return ir::make_shuffle(lo, hi, lanes);
}

// Output vector by output vector: each of the C / b blocks, at every pixel, is g loads of m
// channels (one per run) interleaved and stored whole.
Stmt interleaved(const ShuffleShape& s, const std::vector<ir::Buffer>& xs, const ir::Buffer& y,
                 const Expr& image, ir::ForKind kind) {
  const int64_t m = s.lanes_per_run();
  Var cb("shuffle.cb"), p("shuffle.p");
  std::vector<Expr> runs;
  for (int64_t r = 0; r < s.group; ++r) {
    const int64_t i = s.run_input[r], b = s.blocks[i];
    // The run's m channels sit in one block of the input (m divides the block and the
    // first channel), so they are m neighbouring lanes.
    Expr ch = Expr(s.run_first[r]) + Expr(cb) * Expr(m);
    Expr first = at(ch, p, s.hw, b);
    runs.push_back(ir::make_load(xs[i], {image, ir::make_ramp(first, 1, static_cast<int>(m))}));
  }
  Expr out = (Expr(cb) * Expr(s.hw) + p) * Expr(s.block);
  Stmt store = ir::make_store(y, interleave(runs),
                              {image, ir::make_ramp(out, 1, static_cast<int>(s.block))});
  Stmt pixels = ir::make_for(p, 0, s.hw, ir::ForKind::Serial, store);
  return ir::make_for(cb, 0, s.c / s.block, kind, pixels);
}

// Run by run, channel by channel: a plane copied in vectors where both sides are NCHW,
// element by element where either is blocked.
Stmt channel_by_channel(const ShuffleShape& s, const std::vector<ir::Buffer>& xs,
                        const ir::Buffer& y, const Expr& image, ir::ForKind kind, int64_t lanes) {
  std::vector<Stmt> seq;
  for (int64_t r = 0; r < s.group; ++r) {
    const int64_t i = s.run_input[r], b = s.blocks[i];
    const std::string stem = "shuffle.r" + std::to_string(r);
    Var q(stem + ".q"), p(stem + ".p");
    Expr out_ch = Expr(q) * Expr(s.group) + Expr(r), in_ch = Expr(s.run_first[r]) + Expr(q);
    Stmt plane;
    if (b == 1 && s.block == 1) {
      // Contiguous planes: whole vectors, then the elements left.
      std::vector<Stmt> copy;
      const int64_t vectors = s.hw / lanes;
      if (vectors > 0) {
        Var v(stem + ".v");
        Expr e = Expr(v) * Expr(lanes);
        Expr load = ir::make_load(
            xs[i], {image, ir::make_ramp(in_ch * Expr(s.hw) + e, 1, static_cast<int>(lanes))});
        copy.push_back(ir::make_for(
            v, 0, vectors, ir::ForKind::Serial,
            ir::make_store(
                y, load,
                {image, ir::make_ramp(out_ch * Expr(s.hw) + e, 1, static_cast<int>(lanes))})));
      }
      if (vectors * lanes < s.hw) {
        Expr e = Expr(p) + Expr(vectors * lanes);
        copy.push_back(
            ir::make_for(p, 0, s.hw - vectors * lanes, ir::ForKind::Serial,
                         ir::make_store(y, ir::make_load(xs[i], {image, in_ch * Expr(s.hw) + e}),
                                        {image, out_ch * Expr(s.hw) + e})));
      }
      plane = ir::make_seq(copy);
    } else {
      plane = ir::make_for(p, 0, s.hw, ir::ForKind::Serial,
                           ir::make_store(y, ir::make_load(xs[i], {image, at(in_ch, p, s.hw, b)}),
                                          {image, at(out_ch, p, s.hw, s.block)}));
    }
    seq.push_back(ir::make_for(q, 0, s.run, kind, plane));
  }
  return ir::make_seq(seq);
}

class ChannelShuffle : public OpTemplate {
 public:
  std::string name() const override { return "channel_shuffle.copy"; }
  std::string op() const override { return "channel_shuffle"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    shuffle_shape(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    const ShuffleShape s = shuffle_shape(w);
    return Config({{"parallel", copy_worth_threads(s.n * s.output_elements(), w.dtype) ? 1 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    const ShuffleShape s = shuffle_shape(w);
    std::vector<TensorSpec> in;
    for (size_t i = 0; i < s.channels.size(); ++i)
      in.push_back(
          {numbered("X", i), {s.n, ceil_div(s.channels[i], s.blocks[i]), s.hw, s.blocks[i]}});
    return in;
  }
  TensorSpec output(const Workload& w) const override {
    const ShuffleShape s = shuffle_shape(w);
    return {"Y", {s.n, s.c / s.block, s.hw, s.block}};
  }
  std::vector<DataType> dtypes() const override {
    return {DataType::f32(), DataType::f16(), DataType::bf16(), DataType::u8(), DataType::i8()};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const ShuffleShape s = shuffle_shape(w);
    Values y(s.n * s.output_elements());
    auto index = [&](int64_t ch, int64_t p, int64_t b) { return (ch / b * s.hw + p) * b + ch % b; };
    for (int64_t o = 0; o < s.n; ++o)
      for (int64_t c = 0; c < s.c; ++c) {
        const int64_t r = c % s.group, q = c / s.group, i = s.run_input[r];
        for (int64_t p = 0; p < s.hw; ++p)
          y[o * s.output_elements() + index(c, p, s.block)] =
              in[i][o * s.input_elements(i) + index(s.run_first[r] + q, p, s.blocks[i])];
      }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const ShuffleShape s = shuffle_shape(w);
    // One row per image on either side; the kernel's own loops walk inside the row.
    std::vector<te::Tensor> xs;
    for (size_t i = 0; i < s.channels.size(); ++i)
      xs.push_back(te::placeholder({s.n, s.input_elements(i)}, w.dtype, numbered("X", i)));
    const int64_t row = s.output_elements();
    te::Tensor y = te::compute(
        {s.n, row},
        [&](Var o, Var j) {
          // What names every input for the region (the rows laid end to end, clamped into
          // each); never evaluated per element: the copies below are the kernel.
          Expr v;
          int64_t start = 0;
          for (size_t i = 0; i < xs.size(); ++i) {
            const int64_t size = s.input_elements(i);
            Expr load = xs[i](o, ir::min(ir::max(Expr(j) - Expr(start), Expr(0)), Expr(size - 1)));
            v = i == 0 ? load : ir::make_select(Expr(j) < Expr(start), v, load);
            start += size;
          }
          return v;
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    const bool threads = cfg["parallel"] != 0;
    if (threads && s.n > 1) out.parallel(out.axis(0));
    std::vector<ir::Buffer> in_buffers;
    for (const te::Tensor& x : xs) in_buffers.push_back(x.buffer());
    te::TensorIntrin copy;
    copy.name = "channel_shuffle_image";
    copy.extents = {row};
    const ir::ForKind kind = threads && s.n == 1 ? ir::ForKind::Parallel : ir::ForKind::Serial;
    copy.emit = [s, in_buffers, kind, lanes = t.lanes(w.dtype)](const te::TensorizeRegion& r) {
      return s.lanes_per_run() > 0
                 ? interleaved(s, in_buffers, r.output, r.output_base[0], kind)
                 : channel_by_channel(s, in_buffers, r.output, r.output_base[0], kind, lanes);
    };
    out.tensorize(out.axis(1), std::move(copy));
    std::vector<te::Tensor> args = xs;
    args.push_back(y);
    return logical_kernel(std::move(sch), args, inputs(w), output(w),
                          double(s.n * s.output_elements()));
  }
};

}  // namespace

bool channel_shuffle_interleaves(const Workload& w) {
  return shuffle_shape(w).lanes_per_run() > 0;
}

const OpTemplate& channel_shuffle_template() {
  static const ChannelShuffle t;
  return t;
}

}  // namespace kiln::schedules
