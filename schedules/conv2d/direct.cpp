// The helpers the direct conv2d templates share (declared and described in direct.h).
#include "schedules/conv2d/direct.h"

#include <algorithm>

namespace kiln::schedules {

using ir::Expr;
using ir::Var;

int64_t vector_registers(const Target& t) {
  return t.is_x86() && t.vector_bits < 512 ? 16 : 32;
}

int64_t pick_oc_vecs(int64_t pref, int64_t channels, int64_t lanes) {
  int64_t vecs = std::min(pref, ceil_div(channels, lanes));
  if (vecs == 3) vecs = 2;
  // Halved while that pads fewer channels: 48 channels are three 16-lane blocks, not two of
  // 32 (64 channels, a third of them zeros that every later layer reads and computes).
  auto padded = [&](int64_t v) { return ceil_div(channels, v * lanes) * v * lanes; };
  while (vecs > 1 && padded(vecs / 2) < padded(vecs)) vecs /= 2;
  return vecs;
}

ChannelParts all_channels(const Conv2dParams& p, int64_t ocb) {
  return {1, p.c, ceil_div(p.o, ocb) * ocb};
}

ChannelParts channel_parts(const Conv2dParams& p, int64_t icb, int64_t ocb) {
  const ChannelParts whole = all_channels(p, ocb);
  const int64_t og = p.o / p.groups, cg = p.c / p.groups;
  if (p.groups == 1 || (og % ocb != 0 && ocb % og != 0)) return whole;
  const int64_t groups_per_part = std::max<int64_t>(1, ocb / og);
  if (groups_per_part >= p.groups) return whole;  // one block holds every group
  const ChannelParts parts{ceil_div(p.groups, groups_per_part), cg * groups_per_part,
                           og * groups_per_part};
  return parts.channels % icb == 0 || icb % parts.channels == 0 ? parts : whole;
}

int64_t part_first_block(const ChannelParts& parts, int64_t part, int64_t icb) {
  return part * parts.channels / icb;
}
int64_t part_blocks(const ChannelParts& parts, int64_t icb) {
  return ceil_div(parts.channels, icb);
}

Values pack_conv_weight(const Values& wv, const Conv2dParams& p, int64_t icb, int64_t ocb,
                        const ChannelParts& parts) {
  const int64_t cb = part_blocks(parts, icb), ob = ceil_div(p.o, ocb);
  const int64_t cg = p.c / p.groups, og = p.o / p.groups;
  Values out(static_cast<size_t>(ob * cb * p.kh * p.kw * icb * ocb), 0.0f);
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t ci = 0; ci < cg; ++ci) {
      // The channel within the blocks its part reads.
      int64_t c = o / og * cg + ci - part_first_block(parts, o / parts.outputs, icb) * icb;
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx)
          out[(((((o / ocb) * cb + c / icb) * p.kh + ky) * p.kw + kx) * icb + c % icb) * ocb +
              o % ocb] = wv[((o * cg + ci) * p.kh + ky) * p.kw + kx];
    }
  return out;
}

int64_t pick_oc_inner(const Conv2dParams& p, int64_t ocb, int64_t elem_bytes) {
  const int64_t input_bytes = p.c * p.h * p.w * elem_bytes;
  const bool many_blocks = ceil_div(p.o, ocb) >= 4;
  return p.groups == 1 && p.c >= 128 && many_blocks && input_bytes >= (2 << 20) ? 2 : 0;
}

te::Tensor blocked_epilogue(const Workload& w, const EpilogueTensors& ep, const te::Tensor& acc,
                            int64_t ocb) {
  std::vector<Expr> shape = acc.shape();
  const size_t last = shape.size() - 1;
  return te::compute(
      shape,
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> idx(v.begin(), v.end());
        Expr channel = v[1] * ocb + v[last];
        return ir::make_cast(w.dtype, apply_epilogue(w, ep, acc(idx), idx, channel));
      },
      "conv");
}

}  // namespace kiln::schedules
