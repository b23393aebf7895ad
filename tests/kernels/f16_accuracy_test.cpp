// How accurate f16 dense and conv are on arm-fp16 (under qemu) for each way of accumulating
// (schedules/f16_partial_sums.h): all in f32, all in f16, and f16 within K blocks added into
// f32. Layers are ResNet-18's (channels, kernel, stride: the reduction length K that the
// error depends on) on a small image, so qemu gets through them; dense shapes are its fc and
// two transformer projections. Inputs are f16 values in [-1, 1); outputs are read in f32
// (out_f32=1) so only the accumulation differs. Each is compared with the same sums in f32
// (sequential order) and in double, by kiln's closeness rule (kiln/compare.h: the error
// scaled by max(1, |want|, rms(want))); the table is printed and each mode is held to the
// tolerance the table justifies. Labels `arm` and `slow` (about a minute under qemu).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kiln/compare.h"
#include "schedules/conv2d/common.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/dense/dense.h"
#include "schedules/dense/lowp.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Values;
using schedules::Workload;

// Sequential sums in Acc (float: what an f32 kernel computes; double: the exact reference).
template <typename Acc>
Values dense_sums(const schedules::DenseShape& s, const Values& a, const Values& b) {
  Values c(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      Acc acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += Acc(a[i * s.k + k]) * Acc(b[k * s.n + j]);
      c[i * s.n + j] = static_cast<float>(acc);
    }
  return c;
}

template <typename Acc>
Values conv_sums(const schedules::Conv2dParams& p, const Values& d, const Values& w) {
  const int64_t oh = p.out_h(), ow = p.out_w();
  Values out(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          Acc acc = 0;
          for (int64_t c = 0; c < p.c; ++c)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t iy = y * p.sh - p.ph + ky, ix = x * p.sw - p.pw + kx;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += Acc(d[((n * p.c + c) * p.h + iy) * p.w + ix]) *
                       Acc(w[((o * p.c + c) * p.kh + ky) * p.kw + kx]);
              }
          out[((n * p.o + o) * oh + y) * ow + x] = static_cast<float>(acc);
        }
  return out;
}

struct Layer {
  std::string name;
  Workload w;
  int64_t k;  // reduction length
};

Workload conv(int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride) {
  return Workload{"conv2d",
                  {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", o}, {"KH", k}, {"KW", k},
                   {"stride", stride}, {"pad", k / 2}, {"out_f32", 1}},
                  DataType::f16(),
                  {}};
}
Workload dense(int64_t m, int64_t n, int64_t k) {
  return Workload{"dense", {{"M", m}, {"N", n}, {"K", k}, {"out_f32", 1}}, DataType::f16(), {}};
}

std::vector<Layer> layers() {
  return {
      {"conv1 7x7/2 3->64", conv(3, 16, 64, 7, 2), 147},
      {"layer1 3x3 64->64", conv(64, 6, 64, 3, 1), 576},
      {"layer2 3x3/2 64->128", conv(64, 8, 128, 3, 2), 576},
      {"layer2 1x1/2 64->128", conv(64, 8, 128, 1, 2), 64},
      {"layer2 3x3 128->128", conv(128, 4, 128, 3, 1), 1152},
      {"layer3 3x3 256->256", conv(256, 4, 256, 3, 1), 2304},
      {"layer3 1x1/2 128->256", conv(128, 4, 256, 1, 2), 128},
      {"layer4 3x3 512->512", conv(512, 3, 512, 3, 1), 4608},
      {"layer4 1x1/2 256->512", conv(256, 4, 512, 1, 2), 256},
      {"fc 1x1000x512", dense(1, 1000, 512), 512},
      {"dense 8x768x768", dense(8, 768, 768), 768},
      {"dense 4x768x3072", dense(4, 768, 3072), 3072},
  };
}

struct Errors {
  double abs_f32 = 0, rel_f32 = 0, abs_f64 = 0, rel_f64 = 0;
};

double max_abs(const Values& got, const Values& want) {
  double m = 0;
  for (size_t i = 0; i < got.size(); ++i) m = std::max(m, std::fabs(double(got[i]) - want[i]));
  return m;
}
double max_rel(const Values& got, const Values& want) {
  return judge_closeness(
             got.size(), [&](size_t i) { return double(got[i]); },
             [&](size_t i) { return double(want[i]); }, INFINITY)
      .max_error;
}

// The kernel of `cfg` (the fallback with `knobs` set) against both references; false when
// the target cannot run here.
bool measure(const Layer& l, const std::map<std::string, int64_t>& knobs, Errors* e) {
  const bool is_conv = l.w.op == "conv2d";
  const OpTemplate& tpl =
      is_conv ? schedules::conv2d_f16_arm_template() : schedules::dense_f16_arm_template();
  const Target t = target_from_name("arm-fp16");
  Config cfg = tpl.fallback(l.w, t);
  for (const auto& [k, v] : knobs) cfg.set(k, v);
  std::vector<Values> in;
  uint32_t seed = 31;
  for (const schedules::TensorSpec& s : tpl.inputs(l.w))
    in.push_back(random_values(s.elements(), seed++, DataType::f16()));
  std::string skip;
  Values got = run_template(tpl, l.w, "arm-fp16", cfg, in, DataType::f32(), &skip);
  if (!skip.empty()) return false;
  Values f32, f64;
  if (is_conv) {
    schedules::Conv2dParams p = schedules::conv2d_params(l.w);
    f32 = conv_sums<float>(p, in[0], in[1]);
    f64 = conv_sums<double>(p, in[0], in[1]);
  } else {
    schedules::DenseShape s = schedules::dense_shape(l.w);
    f32 = dense_sums<float>(s, in[0], in[1]);
    f64 = dense_sums<double>(s, in[0], in[1]);
  }
  EXPECT_EQ(got.size(), f64.size());
  *e = {max_abs(got, f32), max_rel(got, f32), max_abs(got, f64), max_rel(got, f64)};
  return true;
}

struct Mode {
  const char* name;
  std::map<std::string, int64_t> knobs;
  double tolerance;  // of the error against double, by kiln's rule
};

// Tolerances from the table (kiln's rule against double; measured, 2026-11, qemu 7.2):
//   K:                 64      576     1152    2304    4608 (conv)   3072 (dense)
//   f32 acc            5e-7    2e-6    2e-6    4e-6    5e-6          4e-6
//   f16 acc            5e-3    1.5e-2  2.5e-2  2.6e-2  3.4e-2        3.2e-2
//   f16 blocks         2.4e-3  4.3e-3  4.3e-3  4.0e-3  4.0e-3        3.2e-3
// f32 accumulation is f32 rounding only (1e-4, the f32 tolerance); f16 blocks stay flat in
// K, well inside f16's 1e-2 (kb 128 or a whole 3x3 tap block: 7e-3); all-f16 accumulation
// grows with K past 1e-2 and gets 5e-2.
TEST(F16Accuracy, ResNet18LayersPerAccumulationMode) {
  const std::vector<Mode> modes = {{"f32 acc", {{"f16_acc", 0}}, 1e-4},
                                   {"f16 acc", {{"f16_acc", 1}}, 5e-2},
                                   {"f16 blocks (fallback)", {{"f16_acc", 2}}, 1e-2}};
  std::printf("%-24s %5s  %-22s %10s %10s %10s %10s\n", "layer", "K", "accumulation",
              "abs(f32)", "rel(f32)", "abs(f64)", "rel(f64)");
  for (const Layer& l : layers())
    for (const Mode& m : modes) {
      SCOPED_TRACE(l.name + " " + m.name);
      Errors e;
      if (!measure(l, m.knobs, &e)) GTEST_SKIP() << "arm-fp16 cannot run here";
      std::printf("%-24s %5lld  %-22s %10.2e %10.2e %10.2e %10.2e\n", l.name.c_str(),
                  static_cast<long long>(l.k), m.name, e.abs_f32, e.rel_f32, e.abs_f64, e.rel_f64);
      EXPECT_LE(e.rel_f64, m.tolerance);
    }
}

// The block length's effect on the longest reductions (dense kb; conv f16_block levels).
TEST(F16Accuracy, BlockLengthOnLongReductions) {
  const std::vector<Layer> all = layers();
  const Layer& conv = all[7];     // K = 4608
  const Layer& dense = all[11];   // K = 3072
  std::printf("%-24s %-22s %10s %10s\n", "layer", "block", "abs(f64)", "rel(f64)");
  for (int64_t kb : {16, 32, 64, 128}) {
    Errors e;
    if (!measure(dense, {{"f16_acc", 2}, {"kb", kb}}, &e)) GTEST_SKIP() << "no arm-fp16 here";
    std::printf("%-24s kb %-19lld %10.2e %10.2e\n", dense.name.c_str(), static_cast<long long>(kb),
                e.abs_f64, e.rel_f64);
    EXPECT_LE(e.rel_f64, 1e-2);
  }
  for (int64_t level : {1, 2, 3}) {
    Errors e;
    if (!measure(conv, {{"f16_acc", 2}, {"f16_block", level}}, &e)) GTEST_SKIP();
    std::printf("%-24s f16_block %-12lld %10.2e %10.2e\n", conv.name.c_str(),
                static_cast<long long>(level), e.abs_f64, e.rel_f64);
    EXPECT_LE(e.rel_f64, 1e-2);
  }
}

}  // namespace
}  // namespace kiln::testing
