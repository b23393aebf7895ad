// conv2d.depthwise's padded input per band of output rows (knob pad_rows, see
// schedules/conv2d/blocked.h): every band height of the space, beside the old whole copy
// (pad_rows 0), against the reference on AVX-512, AVX2 and NEON (qemu), on odd H and W,
// padding 1 and 2, stride 1 and 2, channel counts that leave a partial block, bands that do
// not divide the output rows, the block loop inside the W tiles (oc_inner 2, whose band
// holds every block of one tile), and a band too wide for the stack (workspace buffer).
// Plus what the space and the fallback offer: no knob without padding, old logs load as the
// whole copy, the fallback takes a band.
#include <gtest/gtest.h>

#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/templates.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::Workload;

struct Dw {
  int64_t n, c, h, w, k, stride, pad;
};

Workload depthwise(const Dw& d, std::vector<std::string> epilogue = {}) {
  return Workload{"conv2d",
                  {{"N", d.n}, {"C", d.c}, {"H", d.h}, {"W", d.w}, {"O", d.c}, {"KH", d.k},
                   {"KW", d.k}, {"stride", d.stride}, {"pad", d.pad}, {"groups", d.c}},
                  DataType::f32(),
                  std::move(epilogue)};
}

struct BandCase {
  Workload w;
  std::string target;
  Config cfg;
};

void PrintTo(const BandCase& c, std::ostream* os) {
  *os << c.w.str() << " on " << c.target << " config " << c.cfg.to_json();
}

std::string band_case_name(const ::testing::TestParamInfo<BandCase>& info) {
  const Config& c = info.param.cfg;
  return test_name(info.param.target + "_rows" + std::to_string(c["pad_rows"]) + "_oc" +
                       std::to_string(c["oc_inner"]),
                   info.index);
}

const schedules::OpTemplate& tpl() { return schedules::conv2d_depthwise_template(); }

// The fallback with pad_rows and oc_inner set.
Config band_config(const Workload& w, const std::string& target, int64_t rows, int64_t oc_inner) {
  Config c = tpl().fallback(w, target_from_name(target));
  c.set("pad_rows", rows);
  c.set("oc_inner", oc_inner);
  return c;
}

std::vector<BandCase> cases() {
  const std::vector<Workload> shapes = {
      depthwise({1, 20, 9, 11, 3, 1, 1}, {"bias", "relu6"}),  // partial block, odd H and W
      depthwise({1, 7, 13, 10, 3, 2, 1}),                     // prime C, stride 2
      depthwise({2, 24, 10, 7, 3, 2, 2}, {"residual"}),       // pad 2, batch 2
      depthwise({1, 16, 8, 9, 5, 1, 2}),                      // 5x5, pad 2
  };
  std::vector<BandCase> out;
  for (const Workload& w : shapes) {
    const schedules::ConfigSpace space = tpl().space(w, target_from_name("x86-avx512"));
    for (const schedules::Knob& k : space.knobs()) {
      if (k.name != "pad_rows") continue;
      for (int64_t rows : k.choices)
        for (int64_t oc_inner : {0, 2})
          for (const std::string t : {"x86-avx512", "x86-avx2"})
            out.push_back({w, t, band_config(w, t, rows, oc_inner)});
    }
    // Under qemu: the widest band, and one row with the blocks inside the tiles.
    out.push_back({w, "arm-neon", band_config(w, "arm-neon", 4, 0)});
    out.push_back({w, "arm-neon", band_config(w, "arm-neon", 1, 2)});
  }
  // 10 rows x 4202 columns x 16 channels of f32 per band: over kMaxLocalPadBytes, so the
  // band lives in the workspace; on two threads, each band its own.
  Workload wide = depthwise({1, 16, 9, 4200, 3, 1, 1});
  Config c = band_config(wide, "x86-avx512", 8, 0);
  c.set("parallel", 1);
  out.push_back({wide, "x86-avx512", c});
  return out;
}

class PadBandTest : public ::testing::TestWithParam<BandCase> {};

TEST_P(PadBandTest, MatchesReference) {
  const BandCase& c = GetParam();
  std::string skip = check_template_config(tpl(), c.w, c.target, c.cfg);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Depthwise, PadBandTest, ::testing::ValuesIn(cases()), band_case_name);

TEST(PadBandSpace, NoKnobWithoutPadding) {
  const Target t = target_from_name("x86-avx512");
  for (const schedules::Knob& k : tpl().space(depthwise({1, 16, 8, 8, 3, 1, 0}), t).knobs())
    EXPECT_NE(k.name, "pad_rows");
  EXPECT_FALSE(tpl().fallback(depthwise({1, 16, 8, 8, 3, 1, 0}), t).has("pad_rows"));
}

TEST(PadBandSpace, BandsUpToTheOutputRowsAndOldLogsGetTheWholeCopy) {
  const Target t = target_from_name("x86-avx512");
  Workload w = depthwise({1, 16, 6, 6, 3, 2, 1});  // 3 output rows
  schedules::ConfigSpace space = tpl().space(w, t);
  Config fb = tpl().fallback(w, t);
  space.validate(fb);
  for (const schedules::Knob& k : space.knobs())
    if (k.name == "pad_rows") EXPECT_EQ(k.choices, (std::vector<int64_t>{0, 1, 2}));
  Config old = fb;
  std::map<std::string, int64_t> values = old.values();
  values.erase("pad_rows");
  EXPECT_EQ(space.with_defaults(Config(values))["pad_rows"], 0);
}

TEST(PadBandSpace, FallbackTakesABand) {
  const Target t = target_from_name("x86-avx512");
  // Stride 2: one output row per band.
  EXPECT_EQ(tpl().fallback(depthwise({1, 96, 112, 112, 3, 2, 1}), t)["pad_rows"], 1);
  // Stride 1: 8 output rows read 10 input rows of one 16-channel block over 114 columns,
  // 73 KB, within the 96 KB budget.
  EXPECT_EQ(tpl().fallback(depthwise({1, 32, 112, 112, 3, 1, 1}), t)["pad_rows"], 8);
  // No more rows than the output has.
  EXPECT_EQ(tpl().fallback(depthwise({1, 960, 7, 7, 3, 1, 1}), t)["pad_rows"], 4);
}

}  // namespace
}  // namespace kiln::testing
