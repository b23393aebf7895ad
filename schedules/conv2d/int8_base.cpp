#include "schedules/conv2d/int8_base.h"

#include <algorithm>

#include "schedules/conv2d/blocked.h"
#include "schedules/layout.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

std::vector<TensorSpec> Conv2dInt8Base::inputs(const Workload& w) const {
  const Conv2dParams p = conv2d_params(w);
  std::vector<TensorSpec> in = {{"data", {p.n, p.c, p.h, p.w}}, {"weight", {p.o, p.c, p.kh, p.kw}}};
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
  Values out(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = bias ? double((*bias)[o]) : 0.0;
          for (int64_t c = 0; c < p.c; ++c)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t iy = y * p.sh + ky * p.dh - p.ph, ix = x * p.sw + kx * p.dw - p.pw;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const double a = data[((n * p.c + c) * p.h + iy) * p.w + ix] - double(r.a_zero);
                sum += a * weight[((o * p.c + c) * p.kh + ky) * p.kw + kx];
              }
          out[((n * p.o + o) * oh + y) * ow + x] =
              requantize_reference(r, sum, scale ? (*scale)[o] : 1.0f);
        }
  return out;
}

bool Conv2dInt8Base::is_int8_conv(const Workload& w) {
  return w.op == "conv2d" && (w.dtype == ir::DataType::u8() || w.dtype == ir::DataType::i8()) &&
         conv2d_params(w).groups == 1;
}

void Conv2dInt8Base::check(const Workload& w, const Target& t) const {
  requantize_params(w);
  const Conv2dParams p = conv2d_params(w);
  user_check(p.groups == 1) << name() << ": groups must be 1, got " << p.groups;
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

void Conv2dInt8Base::pad_scale(std::vector<KernelArg>& args, int64_t channels) {
  for (KernelArg& a : args)
    if (a.logical.name == "scale") {
      a.pack = [channels](const Values& v) { return pad_channels(v, channels); };
      a.kernel_elements = channels;
    }
}

}  // namespace kiln::schedules
