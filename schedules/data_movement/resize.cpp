#include "schedules/data_movement/resize.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

enum Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn };
enum Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeShape {
  int64_t n, c, h, w, oh, ow;
  bool linear;
  int64_t coord, nearest;
  double scale_h, scale_w;
};

// The scale the model states, or output / input size when the workload does not give it.
double scale_param(const Workload& w, const std::string& key, const std::string& out,
                   const std::string& in) {
  if (w.params.count(key)) return w.real(key);
  return static_cast<double>(w.param(out)) / static_cast<double>(std::max<int64_t>(w.param(in), 1));
}

ResizeShape resize_shape(const Workload& w) {
  ResizeShape s{w.param("N"),
                w.param("C"),
                w.param("H"),
                w.param("W"),
                w.param("OH"),
                w.param("OW"),
                w.param_or("linear", 0) != 0,
                w.param_or("coord", kHalfPixel),
                w.param_or("nearest_mode", kRoundPreferFloor),
                scale_param(w, "scale_h", "OH", "H"),
                scale_param(w, "scale_w", "OW", "W")};
  for (int64_t v : {s.n, s.c, s.h, s.w, s.oh, s.ow})
    user_check(v > 0) << "resize: every extent must be positive in " << w.str();
  user_check(s.coord >= kHalfPixel && s.coord <= kTfHalfPixelForNn)
      << "resize: coord must be 0..4 (half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
         "tf_half_pixel_for_nn), got "
      << s.coord;
  user_check(s.nearest >= kRoundPreferFloor && s.nearest <= kCeil)
      << "resize: nearest_mode must be 0..3 (round_prefer_floor, round_prefer_ceil, floor, ceil), "
         "got "
      << s.nearest;
  user_check(s.scale_h > 0 && s.scale_w > 0) << "resize: scales must be positive in " << w.str();
  return s;
}

// An output index's source coordinate along one axis, (o + offset_in) / divisor + offset_out
// (or 0), the ONNX transformations written in one form for the reference and the kernel.
struct Transform {
  double offset_in = 0, divisor = 1, offset_out = 0;
  bool zero = false;  // every output maps to coordinate 0
};

Transform transform(int64_t coord, double scale, int64_t in, int64_t out) {
  switch (coord) {
    case kHalfPixel:
      return {0.5, scale, -0.5};
    case kPytorchHalfPixel:
      return {0.5, scale, -0.5, out <= 1};
    case kAlignCorners: {
      // ONNX divides by the output length in * scale, not the rounded size: downsampling 4 by
      // 0.6 maps output 1 to 1 * 3 / 1.4, not to 3 (they agree when sizes were given).
      const double length = double(in) * scale;
      const bool single = out <= 1 || in <= 1 || std::abs(length - 1) < 1e-6;
      return {0, single ? 1 : (length - 1) / double(in - 1), 0, single};
    }
    case kAsymmetric:
      return {0, scale, 0};
    default:
      return {0.5, scale, 0};  // tf_half_pixel_for_nn
  }
}

struct Tap {
  int64_t i0, i1;
  double weight;  // of i1
};

Tap reference_tap(const ResizeShape& s, int64_t o, bool vertical) {
  const int64_t in = vertical ? s.h : s.w, out = vertical ? s.oh : s.ow;
  const double scale = vertical ? s.scale_h : s.scale_w;
  Transform t = transform(s.coord, scale, in, out);
  double x = t.zero ? 0.0 : (double(o) + t.offset_in) / t.divisor + t.offset_out;
  auto clamp = [in](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
  if (s.linear) {
    x = std::min(std::max(x, 0.0), double(in - 1));
    int64_t x0 = static_cast<int64_t>(std::floor(x));
    return {x0, clamp(x0 + 1), x - double(x0)};
  }
  double r = s.nearest == kFloor              ? std::floor(x)
             : s.nearest == kCeil             ? std::ceil(x)
             : s.nearest == kRoundPreferFloor ? std::ceil(x - 0.5)
                                              : std::floor(x + 0.5);
  int64_t i = clamp(static_cast<int64_t>(r));
  return {i, i, 0.0};
}

class Resize : public OpTemplate {
 public:
  std::string name() const override { return "resize.direct"; }
  std::string op() const override { return "resize"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  ConfigSpace space(const Workload& w, const Target&) const override {
    resize_shape(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    cs.define_knob("unroll", {1, 2, 4});  // output columns per inner iteration
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    ResizeShape s = resize_shape(w);
    return Config({{"parallel", s.n * s.c * s.oh * s.ow >= (16 << 10) ? 1 : 0}, {"unroll", 4}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    ResizeShape s = resize_shape(w);
    return {{"X", {s.n, s.c, s.h, s.w}}};
  }
  TensorSpec output(const Workload& w) const override {
    ResizeShape s = resize_shape(w);
    return {"Y", {s.n, s.c, s.oh, s.ow}};
  }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    ResizeShape s = resize_shape(w);
    Values y(static_cast<size_t>(s.n * s.c * s.oh * s.ow));
    for (int64_t p = 0; p < s.n * s.c; ++p)
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        Tap ty = reference_tap(s, oy, true);
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          Tap tx = reference_tap(s, ox, false);
          auto at = [&](int64_t iy, int64_t ix) {
            return double(in[0][(p * s.h + iy) * s.w + ix]);
          };
          double top = at(ty.i0, tx.i0) * (1 - tx.weight) + at(ty.i0, tx.i1) * tx.weight;
          double bottom = at(ty.i1, tx.i0) * (1 - tx.weight) + at(ty.i1, tx.i1) * tx.weight;
          y[(p * s.oh + oy) * s.ow + ox] =
              static_cast<float>(top * (1 - ty.weight) + bottom * ty.weight);
        }
      }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    ResizeShape s = resize_shape(w);
    const DataType f32 = DataType::f32();
    te::Tensor x = te::placeholder({s.n, s.c, s.h, s.w}, w.dtype, "X");
    // The integer index and weight of one axis, in IR.
    auto taps = [&](const Var& o, bool vertical) {
      const int64_t in = vertical ? s.h : s.w, out = vertical ? s.oh : s.ow;
      Transform t = transform(s.coord, vertical ? s.scale_h : s.scale_w, in, out);
      auto c = [&](double v) { return ir::make_float(f32, v); };
      const Expr half = c(0.5);
      Expr pos =
          t.zero ? c(0) : (ir::make_cast(f32, o) + c(t.offset_in)) / c(t.divisor) + c(t.offset_out);
      auto to_index = [&](Expr v) {
        Expr i = ir::make_cast(o.type(), v);
        return ir::max(ir::min(i, ir::make_int(o.type(), in - 1)), ir::make_int(o.type(), 0));
      };
      auto call = [&](const char* f, Expr v) { return ir::make_call(f32, f, {v}); };
      if (s.linear) {
        pos = ir::min(ir::max(pos, c(0)), c(double(in - 1)));
        Expr fl = call("floor", pos);
        return std::tuple{to_index(fl), to_index(fl + c(1)), pos - fl};
      }
      Expr r = s.nearest == kFloor              ? call("floor", pos)
               : s.nearest == kCeil             ? call("ceil", pos)
               : s.nearest == kRoundPreferFloor ? call("ceil", pos - half)
                                                : call("floor", pos + half);
      Expr i = to_index(r);
      return std::tuple{i, i, c(0)};
    };
    // Each axis's taps once per output row and column, in small tables: per output
    // element the kernel then does loads and two lerps, not the coordinate arithmetic
    // (a division, a floor, clamps and conversions: most of its time when inline).
    auto table = [&](int64_t extent, bool vertical, int part, const char* name) {
      return te::compute(
          {extent},
          [&](Var o) {
            auto t = taps(o, vertical);
            return part == 0 ? std::get<0>(t) : part == 1 ? std::get<1>(t) : std::get<2>(t);
          },
          name);
    };
    te::Tensor ry0 = table(s.oh, true, 0, "row.lo"), cx0 = table(s.ow, false, 0, "col.lo");
    te::Tensor ry1 = ry0, cx1 = cx0, rwy, cwx;
    if (s.linear) {
      ry1 = table(s.oh, true, 1, "row.hi");
      cx1 = table(s.ow, false, 1, "col.hi");
      rwy = table(s.oh, true, 2, "row.weight");
      cwx = table(s.ow, false, 2, "col.weight");
    }
    te::Tensor y = te::compute(
        {s.n, s.c, s.oh, s.ow},
        [&](Var n, Var c, Var oy, Var ox) {
          auto at = [&](Expr iy, Expr ix) { return ir::make_cast(f32, x(n, c, iy, ix)); };
          if (!s.linear) return ir::make_cast(w.dtype, at(ry0(oy), cx0(ox)));
          const Expr one = ir::make_float(f32, 1), wy = rwy(oy), wx = cwx(ox);
          Expr top = at(ry0(oy), cx0(ox)) * (one - wx) + at(ry0(oy), cx1(ox)) * wx;
          Expr bottom = at(ry1(oy), cx0(ox)) * (one - wx) + at(ry1(oy), cx1(ox)) * wx;
          return ir::make_cast(w.dtype, top * (one - wy) + bottom * wy);
        },
        "Y");
    te::Schedule sch({y});
    te::Stage st = sch[y];
    ir::IterVar nc = st.fuse(st.axis(0), st.axis(1));
    if (cfg["parallel"]) st.parallel(nc);
    if (int64_t u = cfg["unroll"]; u > 1 && s.ow >= u) {
      auto [o, i] = st.split(st.axis(3), u);
      st.unroll(i);
    }
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                          double(s.n * s.c * s.oh * s.ow) * (s.linear ? 8 : 1));
  }
};

}  // namespace

const OpTemplate& resize_template() {
  static const Resize t;
  return t;
}

}  // namespace kiln::schedules
