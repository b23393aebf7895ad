#include "schedules/conv2d/int8_base.h"

#include <algorithm>

#include "schedules/conv2d/blocked.h"
#include "schedules/layout.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

std::vector<TensorSpec> Conv2dInt8Base::inputs(const Workload& w) const {
  const Conv2dParams p = conv2d_params(w);
  std::vector<TensorSpec> in = {{"data", {p.n, p.c, p.h, p.w}},
                                {"weight", {p.o, p.c / p.groups, p.kh, p.kw}}};
  if (w.has_epilogue("bias")) in.push_back({"bias", {p.o}});
  if (int8_output_type(w) != ir::DataType::i32()) in.push_back({"scale", {p.o}});
  return in;
}

TensorSpec Conv2dInt8Base::output(const Workload& w) const {
  const Conv2dParams p = conv2d_params(w);
  return {"out", {p.n, p.o, p.out_h(), p.out_w()}};
}

Values Conv2dInt8Base::reference(const Workload& w, const std::vector<Values>& in) const {
  const Conv2dParams p = conv2d_params(w);
  const Requantize r = requantize_params(w);
  const Values &data = in.at(0), &weight = in.at(1);
  size_t next = 2;
  const Values* bias = w.has_epilogue("bias") ? &in.at(next++) : nullptr;
  const Values* scale = r.requantize ? &in.at(next++) : nullptr;
  const int64_t oh = p.out_h(), ow = p.out_w();
  const int64_t cg = p.c / p.groups, og = p.o / p.groups;  // channels per group
  Values out(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = bias ? double((*bias)[o]) : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t iy = y * p.sh + ky * p.dh - p.ph, ix = x * p.sw + kx * p.dw - p.pw;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const int64_t ci = o / og * cg + c;  // the input channel, in o's group
                const double a = data[((n * p.c + ci) * p.h + iy) * p.w + ix] - double(r.a_zero);
                sum += a * weight[((o * cg + c) * p.kh + ky) * p.kw + kx];
              }
          out[((n * p.o + o) * oh + y) * ow + x] =
              requantize_reference(r, sum, scale ? (*scale)[o] : 1.0f);
        }
  return out;
}

bool Conv2dInt8Base::is_int8(const Workload& w) {
  return w.op == "conv2d" && (w.dtype == ir::DataType::u8() || w.dtype == ir::DataType::i8());
}

bool Conv2dInt8Base::is_int8_conv(const Workload& w) {
  return is_int8(w) && conv2d_params(w).groups == 1;
}

bool Conv2dInt8Base::is_int8_depthwise(const Workload& w) {
  if (!is_int8(w)) return false;
  const Conv2dParams p = conv2d_params(w);
  return p.groups == p.c && p.o == p.c;
}

void Conv2dInt8Base::check(const Workload& w, const Target& t) const {
  requantize_params(w);
  user_check(depthwise() ? is_int8_depthwise(w) : is_int8_conv(w))
      << name() << ": " << (depthwise() ? "needs groups == C == O (depthwise)" : "groups must be 1")
      << ", got groups " << conv2d_params(w).groups;
  user_check(t.is_x86() || t.is_aarch64())
      << name() << ": target " << t.name << " is neither x86-64 nor AArch64";
}

namespace {
constexpr int64_t kWidestTile = 14;
}

ConfigSpace Conv2dInt8Base::tile_space(const Conv2dParams& p, std::vector<int64_t> ic_choices,
                                       int64_t lanes) {
  ConfigSpace cs;
  cs.define_knob("ic_bn", std::move(ic_choices));
  cs.define_knob("oc_bn", oc_bn_choices(p.o, lanes));
  cs.define_knob("reg_n", reg_n_choices(p.out_w(), kWidestTile));
  cs.define_knob("unroll_kw", {0, 1});
  cs.define_knob("k_unroll", {1, 2, 4});  // channel groups per iteration of the group loop
  define_tile_loop_knobs(cs);
  return cs;
}

Config Conv2dInt8Base::tile_fallback(const Conv2dParams& p, int64_t icb, int64_t k_unroll,
                                     int64_t lanes, int64_t max_vecs, int64_t max_acc) {
  int64_t vecs = 1;
  for (int64_t oc_bn : oc_bn_choices(p.o, lanes))
    if (oc_bn / lanes <= max_vecs) vecs = std::max(vecs, oc_bn / lanes);
  return Config({{"ic_bn", icb},
                 {"oc_bn", lanes * vecs},
                 {"reg_n", pick_reg_n(p.out_w(), max_acc / vecs, kWidestTile)},
                 {"unroll_kw", p.kw <= 3 ? 1 : 0},
                 {"k_unroll", k_unroll},
                 {"oc_inner", 0},
                 {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
}

te::Tensor Conv2dInt8Base::moved_data(const Conv2dParams& p, const te::Tensor& data,
                                      ir::DataType type, int64_t offset, int64_t pad,
                                      const std::string& name) {
  const auto& shape = data.shape();
  return te::compute(
      {p.n, shape[1], p.h + 2 * p.ph, p.w + 2 * p.pw, shape[4]},
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        ir::Expr y = v[2], x = v[3];
        ir::Expr inside = y >= p.ph && y < p.h + p.ph && x >= p.pw && x < p.w + p.pw;
        ir::Expr yy = ir::max(ir::min(y - p.ph, ir::Expr(p.h - 1)), ir::Expr(0));
        ir::Expr xx = ir::max(ir::min(x - p.pw, ir::Expr(p.w - 1)), ir::Expr(0));
        ir::Expr value = data(v[0], v[1], yy, xx, v[4]);
        if (offset != 0) value = ir::make_cast(ir::DataType::i32(), value) + ir::Expr(offset);
        return ir::make_select(inside, ir::make_cast(type, value),
                               ir::make_const(type, double(pad)));
      },
      name);
}

ScheduledKernel Conv2dInt8Base::finish(const Workload& w, te::Schedule sch, const Tensors& t,
                                       int64_t icb, int64_t ocb,
                                       std::function<Values(const Values&)> pack,
                                       int64_t weight_elements) const {
  const Conv2dParams p = conv2d_params(w);
  std::vector<te::Tensor> tensors = {t.data, t.weight};
  if (t.bias.defined()) tensors.push_back(t.bias);
  if (t.scale.defined()) tensors.push_back(t.scale);
  tensors.push_back(t.out);
  std::vector<KernelArg> args =
      blocked_conv_args(inputs(w), output(w), p, icb, ocb, std::move(pack), weight_elements);
  const int64_t channels = ceil_div(p.o, ocb) * ocb;
  for (KernelArg& a : args) {
    // Drawn as int8 where the kernel holds them wider (i16 pairs, f32 depthwise taps).
    if (a.logical.name == "weight") a.logical_dtype = ir::DataType::i8();
    if (a.logical.name == "scale") {
      a.pack = [channels](const Values& v) { return pad_channels(v, channels); };
      a.kernel_elements = channels;
    }
  }
  return {std::move(sch), std::move(tensors), std::move(args), p.flops()};
}

}  // namespace kiln::schedules
