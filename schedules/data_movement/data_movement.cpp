#include "schedules/data_movement/data_movement.h"

#include <algorithm>
#include <numeric>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

using Shape = std::vector<int64_t>;

const std::vector<DataType>& move_dtypes() {
  static const std::vector<DataType> k = {DataType::f32(), DataType::f16(), DataType::bf16()};
  return k;
}

// The moves that only copy values (no pad value to represent) also move the 8-bit data of
// quantized models.
const std::vector<DataType>& copy_dtypes() {
  static const std::vector<DataType> k = {DataType::f32(), DataType::f16(), DataType::bf16(),
                                          DataType::u8(), DataType::i8()};
  return k;
}

int64_t rank_of(const Workload& w, const std::string& key = "ndim") {
  int64_t n = w.param(key);
  user_check(n >= 1 && n <= 5) << w.op << ": " << key << " must be 1..5, got " << n << " in "
                               << w.str();
  return n;
}

// prefix "D" -> {D0, D1, ...}; every extent must be positive.
Shape dims(const Workload& w, const std::string& prefix, int64_t n, bool positive = true) {
  Shape s;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = w.param(prefix + std::to_string(i));
    user_check(positive ? v > 0 : v >= 0)
        << w.op << ": " << prefix << i << " must be " << (positive ? "positive" : ">= 0")
        << ", got " << v << " in " << w.str();
    s.push_back(v);
  }
  return s;
}

int64_t product(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}
std::vector<Expr> exprs(const Shape& s) { return std::vector<Expr>(s.begin(), s.end()); }

// Row-major strides of `s`.
Shape strides(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// logical_kernel with one element moved per output element: "flops" counts elements.
ScheduledKernel finish(te::Schedule sch, std::vector<te::Tensor> args,
                       const std::vector<TensorSpec>& in, const TensorSpec& out, double elements) {
  return logical_kernel(std::move(sch), std::move(args), in, out, elements);
}

// The copy-out schedule the data movement kernels share: the innermost axis split into
// `vecs` vectors of the dtype's full width (0: scalar), the outermost loop parallel.
void schedule_copy(te::Stage out, const Target& t, DataType dtype, int64_t vecs,
                   bool parallel, const ir::IterVar& inner) {
  if (parallel && out.leaf_axes().size() > 1) out.parallel(out.leaf_axes().front());
  if (vecs <= 0) return;
  const int64_t lanes = t.lanes(dtype);
  auto [o, i] = out.split(inner, lanes * vecs);
  auto [v, l] = out.split(i, lanes);
  out.unroll(v);
  out.vectorize(l);
}

ConfigSpace copy_space() {
  ConfigSpace cs;
  cs.define_knob("vecs", {0, 1, 2, 4});
  cs.define_knob("parallel", {0, 1});
  return cs;
}

// The fallback of a copy whose output is `out`: vectors along the last axis when it holds a
// whole one, threads when the copy is big enough to pay for them.
Config copy_fallback(const Shape& out, const Workload& w, const Target& t) {
  return Config({{"vecs", out.back() >= t.lanes(w.dtype) ? 1 : 0},
                 {"parallel", copy_worth_threads(product(out), w.dtype) ? 1 : 0}});
}

// ---- concat ---------------------------------------------------------------------------

struct ConcatShape {
  Shape out;            // the output shape
  int64_t axis;
  Shape extents;        // each input's extent along axis
  Shape input(size_t k) const {
    Shape s = out;
    s[axis] = extents[k];
    return s;
  }
};

// "X0", "X1", ... (built by append: GCC 12 warns falsely on "X" + std::to_string here).
std::string input_name(size_t k) { return std::string("X").append(std::to_string(k)); }

ConcatShape concat_shape(const Workload& w) {
  int64_t n = rank_of(w);
  ConcatShape s;
  s.axis = w.param("axis");
  user_check(s.axis >= 0 && s.axis < n)
      << "concat: axis must be in [0, " << n << "), got " << s.axis << " in " << w.str();
  int64_t k = w.param("inputs");
  user_check(k >= 1 && k <= kMaxConcatInputs)
      << "concat: inputs must be 1.." << kMaxConcatInputs << ", got " << k << " in " << w.str();
  for (int64_t i = 0; i < n; ++i)
    s.out.push_back(i == s.axis ? 1 : w.param(std::string("D").append(std::to_string(i))));
  for (int64_t i = 0; i < n; ++i)
    user_check(s.out[i] > 0) << "concat: D" << i << " must be positive in " << w.str();
  s.extents = dims(w, "E", k);
  s.out[s.axis] = std::accumulate(s.extents.begin(), s.extents.end(), int64_t{0});
  return s;
}

// The concat as rows: `outer` rows (the dimensions before the axis), each input's row a
// contiguous run of runs[k] = extent * inner elements, the output's row all runs in order.
struct ConcatRows {
  int64_t outer = 1;
  Shape runs;
  int64_t row = 0;  // the output row: the sum of runs
};

ConcatRows concat_rows(const ConcatShape& s) {
  ConcatRows r;
  int64_t inner = 1;
  for (int64_t i = 0; i < s.axis; ++i) r.outer *= s.out[i];
  for (size_t i = s.axis + 1; i < s.out.size(); ++i) inner *= s.out[i];
  for (int64_t e : s.extents) r.runs.push_back(e * inner), r.row += e * inner;
  return r;
}

// The copy of one run of `n` elements from `x`[o, 0..n) to `y`[o, at..at+n): blocks of `vecs`
// vectors of `lanes` (each vector one load and one store, no select), the vectors left, then
// single elements; vecs 0 copies element by element. `kind` is the block loop's (Parallel
// when the rows alone give the threads nothing to share).
ir::Stmt copy_run(const ir::Buffer& x, const ir::Buffer& y, const Expr& o, int64_t at, int64_t n,
                  int64_t lanes, int64_t vecs, ir::ForKind kind, const std::string& stem) {
  std::vector<ir::Stmt> seq;
  auto vector = [&](const Expr& from) {
    Expr v = ir::make_load(x, {o, ir::make_ramp(from, 1, static_cast<int>(lanes))});
    return ir::make_store(y, v, {o, ir::make_ramp(from + Expr(at), 1, static_cast<int>(lanes))});
  };
  int64_t done = 0;
  if (vecs > 0) {
    const int64_t block = lanes * vecs, blocks = n / block;
    if (blocks > 0) {
      Var q(stem + ".block");
      std::vector<ir::Stmt> body;
      for (int64_t v = 0; v < vecs; ++v) body.push_back(vector(q * block + Expr(v * lanes)));
      seq.push_back(ir::make_for(q, 0, blocks, kind, ir::make_seq(body)));
    }
    done = blocks * block;
    for (; done + lanes <= n; done += lanes) seq.push_back(vector(Expr(done)));
  }
  if (done < n) {
    Var e(stem + ".elem");
    seq.push_back(ir::make_for(e, 0, n - done, ir::ForKind::Serial,
                               ir::make_store(y, ir::make_load(x, {o, e + Expr(done)}),
                                              {o, e + Expr(done + at)})));
  }
  return ir::make_seq(seq);
}

class Concat : public OpTemplate {
 public:
  std::string name() const override { return "concat.copy"; }
  std::string op() const override { return "concat"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    concat_shape(w);
    return copy_space();
  }
  Config fallback(const Workload& w, const Target&) const override {
    ConcatShape s = concat_shape(w);
    return Config({{"vecs", s.out.back() >= 8 ? 2 : 0},
                   {"parallel", copy_worth_threads(product(s.out), w.dtype) ? 1 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    ConcatShape s = concat_shape(w);
    std::vector<TensorSpec> in;
    for (size_t k = 0; k < s.extents.size(); ++k) in.push_back({input_name(k), s.input(k)});
    return in;
  }
  TensorSpec output(const Workload& w) const override { return {"Y", concat_shape(w).out}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    ConcatShape s = concat_shape(w);
    // Rows before the axis, then each input's contiguous block of extent * inner.
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < s.axis; ++i) outer *= s.out[i];
    for (size_t i = s.axis + 1; i < s.out.size(); ++i) inner *= s.out[i];
    Values y;
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < in.size(); ++k) {
        int64_t block = s.extents[k] * inner;
        y.insert(y.end(), in[k].begin() + o * block, in[k].begin() + (o + 1) * block);
      }
    return y;
  }

  std::vector<DataType> dtypes() const override { return copy_dtypes(); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    const ConcatShape s = concat_shape(w);
    const ConcatRows rows = concat_rows(s);
    // Rows of the flattened tensors: every input's row is one contiguous run of the output's.
    std::vector<te::Tensor> xs;
    for (size_t k = 0; k < s.extents.size(); ++k)
      xs.push_back(te::placeholder({rows.outer, rows.runs[k]}, w.dtype, input_name(k)));
    te::Tensor y = te::compute(
        {rows.outer, rows.row},
        [&](Var o, Var j) {
          // What the copies below compute (the region's loads name each input); never
          // evaluated per element.
          Expr v = xs.back()(o, j - (rows.row - rows.runs.back()));
          int64_t end = rows.row - rows.runs.back();
          for (size_t k = xs.size() - 1; k-- > 0;) {
            end -= rows.runs[k];
            v = ir::make_select(j < Expr(end + rows.runs[k]), xs[k](o, j - Expr(end)), v);
          }
          return v;
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    const bool threads = cfg["parallel"] != 0;
    if (threads && rows.outer > 1) out.parallel(out.axis(0));
    std::vector<ir::Buffer> in_buffers;
    for (const te::Tensor& x : xs) in_buffers.push_back(x.buffer());
    te::TensorIntrin copy;
    copy.name = "concat_rows";
    copy.extents = {rows.row};
    const ir::ForKind kind =
        threads && rows.outer == 1 ? ir::ForKind::Parallel : ir::ForKind::Serial;
    copy.emit = [rows, in_buffers, lanes = t.lanes(w.dtype), vecs = cfg["vecs"],
                 kind](const te::TensorizeRegion& r) {
      std::vector<ir::Stmt> seq;
      int64_t at = 0;
      for (size_t k = 0; k < in_buffers.size(); ++k) {
        seq.push_back(copy_run(in_buffers[k], r.output, r.output_base[0], at, rows.runs[k], lanes,
                               vecs, kind, "x" + std::to_string(k)));
        at += rows.runs[k];
      }
      return ir::make_seq(seq);
    };
    out.tensorize(out.axis(1), std::move(copy));
    std::vector<te::Tensor> args = xs;
    args.push_back(y);
    return finish(std::move(sch), args, inputs(w), output(w), double(product(s.out)));
  }
};

// ---- transpose ------------------------------------------------------------------------

}  // namespace

bool copy_worth_threads(int64_t elements, DataType dtype) {
  return elements * dtype.bytes() >= (256 << 10);
}

TransposeShape transpose_shape(const Workload& w) {
  int64_t n = rank_of(w);
  TransposeShape s;
  s.in = dims(w, "D", n);
  s.perm = dims(w, "P", n, false);
  Shape sorted = s.perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < n; ++i)
    user_check(sorted[i] == i) << "transpose: P0..P" << n - 1
                               << " must be a permutation of 0.." << n - 1 << " in " << w.str();
  for (int64_t p : s.perm) s.out.push_back(s.in[p]);
  return s;
}

Values transpose_reference(const TransposeShape& s, const Values& x) {
  Shape ist = strides(s.in), ost = strides(s.out);
  Values y(x.size());
  for (int64_t f = 0; f < product(s.out); ++f) {
    int64_t src = 0;
    for (size_t i = 0; i < s.out.size(); ++i) src += (f / ost[i]) % s.out[i] * ist[s.perm[i]];
    y[f] = x[src];
  }
  return y;
}

TransposeTensors transpose_compute(const TransposeShape& s, ir::DataType dtype) {
  const size_t n = s.in.size();
  te::Tensor x = te::placeholder(exprs(s.in), dtype, "X");
  te::Tensor y = te::compute(
      exprs(s.out),
      [&](const std::vector<Var>& idx) {
        std::vector<Expr> src(n);
        for (size_t i = 0; i < n; ++i) src[s.perm[i]] = idx[i];
        return x(src);
      },
      "Y");
  return {x, y};
}

namespace {

class Transpose : public OpTemplate {
 public:
  std::string name() const override { return "transpose.tiled"; }
  std::string op() const override { return "transpose"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    transpose_shape(w);
    ConfigSpace cs = copy_space();
    cs.define_knob("tile", {0, 8, 16, 32});  // square tile of the two innermost-moving loops
    return cs;
  }
  Config fallback(const Workload& w, const Target& t) const override {
    TransposeShape s = transpose_shape(w);
    int64_t lanes = t.lanes(w.dtype);
    bool moves_inner = s.perm.back() != int64_t(s.perm.size()) - 1;
    return Config({{"vecs", s.out.back() >= lanes ? 1 : 0},
                   {"parallel", copy_worth_threads(product(s.out), w.dtype) ? 1 : 0},
                   {"tile", moves_inner && s.out.back() >= 16 ? 16 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"X", transpose_shape(w).in}};
  }
  TensorSpec output(const Workload& w) const override { return {"Y", transpose_shape(w).out}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    return transpose_reference(transpose_shape(w), in[0]);
  }

  std::vector<DataType> dtypes() const override { return move_dtypes(); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    TransposeShape s = transpose_shape(w);
    const size_t n = s.in.size();
    auto [x, y] = transpose_compute(s, w.dtype);
    te::Schedule sch({y});
    te::Stage out = sch[y];
    // `a`: the output loop that walks the input's innermost dimension. Tiling it with the
    // output's innermost loop makes a tile of reads and a tile of writes both cache-sized.
    size_t a = std::find(s.perm.begin(), s.perm.end(), int64_t(n) - 1) - s.perm.begin();
    ir::IterVar inner = out.axis(n - 1);
    if (int64_t tile = cfg["tile"]; tile > 0 && a != n - 1) {
      auto [ao, ai] = out.split(out.axis(a), tile);
      auto [jo, ji] = out.split(inner, tile);
      std::vector<ir::IterVar> order;
      for (const ir::IterVar& iv : out.leaf_axes())
        if (iv != ai && iv != ji) order.push_back(iv);
      order.push_back(ai);
      order.push_back(ji);
      out.reorder(order);
      inner = ji;
    }
    schedule_copy(out, t, w.dtype, cfg["vecs"], cfg["parallel"] != 0, inner);
    return finish(std::move(sch), {x, y}, inputs(w), output(w), double(product(s.out)));
  }
};

// ---- pad ------------------------------------------------------------------------------

// ONNX Pad's modes: "mode" 0 fills with the value, 1 (edge) repeats the border element,
// 2 (reflect) mirrors the input about its border element (style transfer and GAN generators
// pad with it).
enum PadMode : int64_t { kPadConstant = 0, kPadEdge = 1, kPadReflect = 2 };

struct PadShape {
  Shape in, before, after, out;
  double value;
  int64_t mode;
};

PadShape pad_shape(const Workload& w) {
  int64_t n = rank_of(w);
  PadShape s{dims(w, "D", n),
             dims(w, "B", n, false),
             dims(w, "A", n, false),
             {},
             w.real_or("value", 0.0),
             w.param_or("mode", kPadConstant)};
  user_check(s.mode >= kPadConstant && s.mode <= kPadReflect)
      << "pad: mode must be 0 (constant), 1 (edge) or 2 (reflect), got " << s.mode;
  for (int64_t i = 0; i < n; ++i) {
    s.out.push_back(s.in[i] + s.before[i] + s.after[i]);
    // A reflection mirrors once: it needs in - 1 elements on each side of the border.
    user_check(s.mode != kPadReflect || (s.before[i] < s.in[i] && s.after[i] < s.in[i]))
        << "pad: reflect pads of dimension " << i << " (" << s.before[i] << ", " << s.after[i]
        << ") must be smaller than its size " << s.in[i];
  }
  return s;
}

// The source index of output coordinate c - before (as `c`) along a dimension of size n:
// clamped for the constant and edge modes (the constant mode selects the value outside).
int64_t pad_source(int64_t c, int64_t n, int64_t mode) {
  if (mode == kPadReflect) return c < 0 ? -c : c >= n ? 2 * (n - 1) - c : c;
  return std::max<int64_t>(0, std::min(c, n - 1));
}

class Pad : public OpTemplate {
 public:
  // The name predates the edge and reflect modes ("mode"); tuning logs key on it.
  std::string name() const override { return "pad.constant"; }
  std::string op() const override { return "pad"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    pad_shape(w);
    return copy_space();
  }
  Config fallback(const Workload& w, const Target& t) const override {
    return copy_fallback(pad_shape(w).out, w, t);
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override { return {{"X", pad_shape(w).in}}; }
  TensorSpec output(const Workload& w) const override { return {"Y", pad_shape(w).out}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    PadShape s = pad_shape(w);
    Shape ist = strides(s.in), ost = strides(s.out);
    Values y(static_cast<size_t>(product(s.out)));
    for (int64_t f = 0; f < product(s.out); ++f) {
      int64_t src = 0;
      bool inside = true;
      for (size_t i = 0; i < s.out.size(); ++i) {
        int64_t c = (f / ost[i]) % s.out[i] - s.before[i];
        inside = inside && c >= 0 && c < s.in[i];
        src += pad_source(c, s.in[i], s.mode) * ist[i];
      }
      y[f] = inside || s.mode != kPadConstant ? in[0][src] : static_cast<float>(s.value);
    }
    return y;
  }

  std::vector<DataType> dtypes() const override { return move_dtypes(); }
  // The pad value may be negative; every other parameter may not.
  std::vector<std::string> value_params() const override { return {"value"}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    PadShape s = pad_shape(w);
    te::Tensor x = te::placeholder(exprs(s.in), w.dtype, "X");
    te::Tensor y = te::compute(
        exprs(s.out),
        [&](const std::vector<Var>& idx) {
          Expr inside = ir::make_bool(true);
          std::vector<Expr> src;
          for (size_t i = 0; i < idx.size(); ++i) {
            Expr c = idx[i] - s.before[i];
            if (s.before[i] > 0) inside = inside && c >= 0;
            if (s.after[i] > 0) inside = inside && c < s.in[i];
            if (s.mode == kPadReflect) {
              if (s.before[i] > 0) c = ir::make_select(c < 0, Expr(0) - c, c);
              if (s.after[i] > 0) c = ir::make_select(c >= s.in[i], Expr(2 * (s.in[i] - 1)) - c, c);
              src.push_back(c);
            } else {
              src.push_back(ir::max(ir::min(c, Expr(s.in[i] - 1)), Expr(0)));
            }
          }
          if (s.mode != kPadConstant) return x(src);
          Expr v = ir::make_cast(w.dtype, ir::make_float(DataType::f32(), s.value));
          return ir::make_select(inside, x(src), v);
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    schedule_copy(out, t, w.dtype, cfg["vecs"], cfg["parallel"] != 0, out.axis(s.out.size() - 1));
    return finish(std::move(sch), {x, y}, inputs(w), output(w), double(product(s.out)));
  }
};

// ---- slice ----------------------------------------------------------------------------

struct SliceShape {
  Shape in, start, step, out;
};

SliceShape slice_shape(const Workload& w) {
  int64_t n = rank_of(w);
  SliceShape s{dims(w, "D", n), dims(w, "S", n, false), {}, dims(w, "O", n)};
  for (int64_t i = 0; i < n; ++i) {
    // A negative step walks backwards from the start (ONNX's Slice with steps < 0: a flip).
    const int64_t step = w.param("T" + std::to_string(i));
    user_check(step != 0) << "slice: T" << i << " must not be 0 in " << w.str();
    s.step.push_back(step);
    const int64_t last = s.start[i] + (s.out[i] - 1) * step;
    user_check(s.start[i] < s.in[i] && last >= 0 && last < s.in[i])
        << "slice: dimension " << i << " reads elements " << s.start[i] << ", "
        << s.start[i] + step << ".. up to " << last << " of " << s.in[i] << " in " << w.str();
  }
  return s;
}

class Slice : public OpTemplate {
 public:
  std::string name() const override { return "slice.strided"; }
  std::string op() const override { return "slice"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    slice_shape(w);
    return copy_space();
  }
  Config fallback(const Workload& w, const Target& t) const override {
    return copy_fallback(slice_shape(w).out, w, t);
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override { return {{"X", slice_shape(w).in}}; }
  TensorSpec output(const Workload& w) const override { return {"Y", slice_shape(w).out}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    SliceShape s = slice_shape(w);
    Shape ist = strides(s.in), ost = strides(s.out);
    Values y(static_cast<size_t>(product(s.out)));
    for (int64_t f = 0; f < product(s.out); ++f) {
      int64_t src = 0;
      for (size_t i = 0; i < s.out.size(); ++i)
        src += (s.start[i] + (f / ost[i]) % s.out[i] * s.step[i]) * ist[i];
      y[f] = in[0][src];
    }
    return y;
  }

  std::vector<DataType> dtypes() const override { return copy_dtypes(); }
  // Steps may be negative (a reversed window).
  std::vector<std::string> value_params() const override {
    return {"T0", "T1", "T2", "T3", "T4"};
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    SliceShape s = slice_shape(w);
    te::Tensor x = te::placeholder(exprs(s.in), w.dtype, "X");
    te::Tensor y = te::compute(
        exprs(s.out),
        [&](const std::vector<Var>& idx) {
          std::vector<Expr> src;
          for (size_t i = 0; i < idx.size(); ++i) src.push_back(idx[i] * s.step[i] + s.start[i]);
          return x(src);
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    schedule_copy(out, t, w.dtype, cfg["vecs"], cfg["parallel"] != 0, out.axis(s.out.size() - 1));
    return finish(std::move(sch), {x, y}, inputs(w), output(w), double(product(s.out)));
  }
};

// ---- reshape --------------------------------------------------------------------------

class Reshape : public OpTemplate {
 public:
  std::string name() const override { return "reshape.copy"; }
  std::string op() const override { return "reshape"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  static std::pair<Shape, Shape> shapes(const Workload& w) {
    Shape in = dims(w, "D", rank_of(w)), out = dims(w, "O", rank_of(w, "ondim"));
    user_check(product(in) == product(out))
        << "reshape: the input has " << product(in) << " elements but the output shape has "
        << product(out) << " in " << w.str();
    return {in, out};
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    shapes(w);
    return copy_space();
  }
  Config fallback(const Workload& w, const Target&) const override {
    int64_t n = product(shapes(w).first);
    return Config(
        {{"vecs", n >= 64 ? 4 : 0}, {"parallel", copy_worth_threads(n, w.dtype) ? 1 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override { return {{"X", shapes(w).first}}; }
  TensorSpec output(const Workload& w) const override { return {"Y", shapes(w).second}; }
  Values reference(const Workload&, const std::vector<Values>& in) const override { return in[0]; }

  std::vector<DataType> dtypes() const override { return copy_dtypes(); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    int64_t n = product(shapes(w).first);
    // Both sides flat: row-major memory is the same for every shape of the same elements.
    te::Tensor x = te::placeholder({n}, w.dtype, "X");
    te::Tensor y = te::compute({n}, [&](Var i) { return x(i); }, "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    int64_t vecs = cfg["vecs"];
    const int64_t lanes = t.lanes(w.dtype);
    ir::IterVar inner = out.axis(0);
    if (cfg["parallel"]) {
      // Big contiguous chunks per thread.
      auto [o, i] = out.split(inner, std::max<int64_t>(lanes * std::max<int64_t>(vecs, 1) * 64, 1));
      out.parallel(o);
      inner = i;
    }
    if (vecs > 0) {
      auto [o, i] = out.split(inner, lanes * vecs);
      auto [v, l] = out.split(i, lanes);
      out.unroll(v);
      out.vectorize(l);
    }
    return finish(std::move(sch), {x, y}, inputs(w), output(w), double(n));
  }
};

}  // namespace

const OpTemplate& concat_template() {
  static const Concat t;
  return t;
}
const OpTemplate& transpose_template() {
  static const Transpose t;
  return t;
}
const OpTemplate& pad_template() {
  static const Pad t;
  return t;
}
const OpTemplate& slice_template() {
  static const Slice t;
  return t;
}
const OpTemplate& reshape_template() {
  static const Reshape t;
  return t;
}

}  // namespace kiln::schedules
