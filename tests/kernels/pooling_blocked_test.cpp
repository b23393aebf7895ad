// The blocked (NCHW[b]c) pooling templates against the NCHW reference: odd sizes, padding,
// ceil_mode, both pad-counting modes, strides 1 and 2, channels that are not a multiple of
// the block; the fallback and random configs on AVX-512, the fallback on AVX2, a random
// config on NEON under qemu; every value of the block, register and padding knobs once.
#include <gtest/gtest.h>

#include "schedules/pooling/blocked.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using schedules::OpTemplate;
using schedules::Workload;

Workload pool(const std::string& op, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
              int64_t s, int64_t p, bool ceil = false, bool include_pad = false,
              ir::DataType t = ir::DataType::f32()) {
  return Workload{op,
                  {{"N", n},
                   {"C", c},
                   {"H", h},
                   {"W", w},
                   {"KH", k},
                   {"KW", k},
                   {"SH", s},
                   {"SW", s},
                   {"PH", p},
                   {"PW", p},
                   {"ceil_mode", ceil ? 1 : 0},
                   {"count_include_pad", include_pad ? 1 : 0}},
                  t,
                  {}};
}
Workload global(int64_t n, int64_t c, int64_t h, int64_t w) {
  return Workload{"global_avg_pool2d", {{"N", n}, {"C", c}, {"H", h}, {"W", w}},
                  ir::DataType::f32(), {}};
}

const OpTemplate& blocked_for(const Workload& w) {
  if (w.op == "max_pool2d") return schedules::max_pool2d_blocked_template();
  if (w.op == "avg_pool2d") return schedules::avg_pool2d_blocked_template();
  return schedules::global_avg_pool2d_blocked_template();
}

std::vector<Workload> awkward_shapes() {
  return {pool("max_pool2d", 1, 20, 13, 11, 3, 2, 1),
          pool("max_pool2d", 2, 5, 9, 10, 2, 2, 0, true),
          pool("max_pool2d", 1, 17, 8, 7, 3, 1, 1),
          pool("avg_pool2d", 1, 19, 11, 13, 3, 2, 1, false, true),
          pool("avg_pool2d", 1, 6, 10, 9, 3, 2, 1, true, false),
          pool("avg_pool2d", 1, 3, 12, 7, 2, 1, 1, true, true),
          pool("avg_pool2d", 1, 33, 9, 9, 3, 1, 1, false, false),
          global(2, 19, 7, 5),
          global(1, 40, 1, 1)};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  for (const Workload& w : awkward_shapes()) {
    const OpTemplate* t = &blocked_for(w);
    for (int c = -1; c < 2; ++c) out.push_back({w, "x86-avx512", c, t});
    out.push_back({w, "x86-avx2", -1, t});
    out.push_back({w, "arm-neon", 0, t});
  }
  // 8-bit max pools (a quantized ResNet's stem pool, and channels that leave a partial block).
  for (ir::DataType d : {ir::DataType::u8(), ir::DataType::i8()}) {
    const Workload w = pool("max_pool2d", 1, 20, 13, 11, 3, 2, 1, false, false, d);
    out.push_back({w, "x86-avx512", -1, &blocked_for(w)});
    out.push_back({w, "x86-avx2", 0, &blocked_for(w)});
    out.push_back({w, "arm-neon", -1, &blocked_for(w)});
  }
  // Real layers natively: ResNet's stem pool and classifier pool, MobileNetV2's.
  for (const Workload& w : {pool("max_pool2d", 1, 64, 112, 112, 3, 2, 1), global(1, 512, 7, 7),
                            global(1, 1280, 7, 7)})
    out.push_back({w, "x86-avx512", -1, &blocked_for(w)});
  return out;
}

class BlockedPoolingTest : public TemplateTest {};

TEST_P(BlockedPoolingTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(BlockedPooling, BlockedPoolingTest, ::testing::ValuesIn(cases()),
                         template_case_name);

// check_template_config's answer for a case that ran here, or that the IR sweep took.
::testing::AssertionResult ran_or_swept(const std::string& skip) {
  if (skip.empty() || skip == "IR sweep") return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not run: " << skip;
}

// Every choice of the knobs that change the loop structure, on a padded ceil_mode window
// whose channels fill no block exactly: on each x86 preset this machine runs (the block sizes
// follow the vector width), so a host without AVX-512 still checks the AVX2 forms.
TEST(BlockedPoolingKnobs, EveryKnobValueMatches) {
  int presets_run = 0;
  for (const char* preset : {"x86-avx512", "x86-avx2"}) {
    const Target x86 = target_from_name(preset);
    if (!host_can_run(x86)) continue;
    ++presets_run;
    for (const Workload& w : {pool("max_pool2d", 1, 21, 9, 11, 3, 2, 1, true),
                              pool("avg_pool2d", 1, 21, 9, 11, 3, 2, 1, true, false)}) {
      const OpTemplate& t = blocked_for(w);
      for (const schedules::Config& cfg : knob_sweep(t, w, x86, {"c_bn", "reg_w", "pad_rows"})) {
        SCOPED_TRACE(std::string(preset) + " " + t.name() + " " + cfg.to_json());
        EXPECT_TRUE(ran_or_swept(check_template_config(t, w, preset, cfg)));
      }
    }
    const Workload g = global(1, 21, 5, 3);
    for (const schedules::Config& cfg : knob_sweep(blocked_for(g), g, x86, {"c_bn", "partials"})) {
      SCOPED_TRACE(std::string(preset) + " " + cfg.to_json());
      EXPECT_TRUE(ran_or_swept(check_template_config(blocked_for(g), g, preset, cfg)));
    }
  }
  if (presets_run == 0) GTEST_SKIP() << "this machine runs neither x86-avx512 nor x86-avx2";
}

}  // namespace
}  // namespace kiln::testing
