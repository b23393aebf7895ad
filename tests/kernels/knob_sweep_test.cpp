// Every value of the knobs that shape loops around the register tiles (K blocking, loop
// order, unroll depth, parallel granularity) lowers, builds and matches the reference: the
// fallback with one knob changed at a time (knob_sweep), plus a few configs that combine
// them, on awkward shapes (tails in every split) natively and under qemu for NEON.
#include <gtest/gtest.h>

#include "schedules/conv2d/common.h"
#include "schedules/dense/dense.h"
#include "schedules/registry.h"
#include "tests/kernels/template_harness.h"
#include "tests/native_targets.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

struct SweepCase {
  const OpTemplate* tpl;
  Workload w;
  std::string target;
  Config cfg;
};

void PrintTo(const SweepCase& c, std::ostream* os) {
  *os << c.tpl->name() << " " << c.w.str() << " on " << c.target << " config " << c.cfg.to_json();
}

std::string sweep_case_name(const ::testing::TestParamInfo<SweepCase>& info) {
  std::string knobs;
  for (const auto& [k, v] : info.param.cfg.values()) knobs += "_" + k + std::to_string(v);
  return test_name(info.param.tpl->name() + "_" + info.param.target + knobs, info.index);
}

Workload dense(int64_t m, int64_t n, int64_t k, DataType t = DataType::f32(),
               std::vector<std::string> epilogue = {}) {
  return Workload{"dense", {{"M", m}, {"N", n}, {"K", k}}, t, std::move(epilogue)};
}

Workload conv(int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride, int64_t pad,
              int64_t groups = 1, std::vector<std::string> epilogue = {}) {
  return Workload{"conv2d",
                  {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", o}, {"KH", k}, {"KW", k},
                   {"stride", stride}, {"pad", pad}, {"groups", groups}},
                  DataType::f32(),
                  std::move(epilogue)};
}

// The fallback with `knobs` swept, plus `combos` (partial configs over the fallback).
void add_sweep(std::vector<SweepCase>& out, const OpTemplate& tpl, const Workload& w,
               const std::string& target, const std::vector<std::string>& knobs,
               const std::vector<std::map<std::string, int64_t>>& combos = {}) {
  Target t = target_from_name(target);
  for (const Config& c : knob_sweep(tpl, w, t, knobs)) out.push_back({&tpl, w, target, c});
  for (const auto& combo : combos) {
    Config c = tpl.fallback(w, t);
    for (const auto& [k, v] : combo) c.set(k, v);
    tpl.space(w, t).validate(c);  // a combo outside the space is a bug of this table
    out.push_back({&tpl, w, target, c});
  }
}

std::vector<SweepCase> cases() {
  std::vector<SweepCase> out;
  const OpTemplate& packed = schedules::dense_packed_template();
  const std::vector<std::string> dense_knobs = {"k_unroll", "panels_outer", "parallel", "kc",
                                                "mc_tiles"};
  // K blocks that do not divide K (100 = 3 x 32 + 4), row blocks past M (37 rows).
  const std::vector<std::map<std::string, int64_t>> dense_combos = {
      {{"kc", 32}, {"mc_tiles", 4}, {"parallel", 2}, {"panels_outer", 0}, {"k_unroll", 8}},
      {{"kc", 64}, {"mc_tiles", 2}, {"parallel", 2}, {"mr", 4}, {"nr_vecs", 3}},
      {{"kc", 0}, {"mc_tiles", 16}, {"parallel", 1}, {"panels_outer", 0}, {"mr", 1}}};
  Workload d = dense(37, 53, 100, DataType::f32(), {"bias", "relu"});
  add_sweep(out, packed, d, "x86-avx512", dense_knobs, dense_combos);
  add_sweep(out, packed, dense(1, 70, 96), "x86-avx512", {"kc", "parallel"});
  add_sweep(out, packed, d, "x86-avx2", {}, dense_combos);
  add_sweep(out, packed, dense(11, 20, 70), "arm-neon", {"kc", "mc_tiles", "parallel"},
            {dense_combos[0]});
  add_sweep(out, schedules::template_named("dense.f16.arm"), dense(9, 20, 70, DataType::f16()),
            "arm-fp16", {},
            {{{"kc", 32}, {"mc_tiles", 4}, {"parallel", 2}, {"panels_outer", 0}, {"k_unroll", 4}},
             {{"kc", 64}, {"mc_tiles", 2}, {"f16_acc", 1}}});
  add_sweep(out, schedules::template_named("dense.bf16.x86"), dense(19, 40, 70, DataType::bf16()),
            test::kX86Bf16, {"parallel"});

  const std::vector<std::string> conv_knobs = {"unroll_kh", "k_unroll", "reduce_order",
                                               "oc_inner", "parallel"};
  const std::vector<std::map<std::string, int64_t>> conv_combos = {
      {{"oc_inner", 2}, {"parallel", 2}, {"reduce_order", 1}, {"k_unroll", 4}, {"unroll_kh", 1}},
      {{"oc_inner", 1}, {"parallel", 2}, {"reduce_order", 1}, {"k_unroll", 2}, {"ic_bn", 4}}};
  const OpTemplate& nchwc = schedules::template_named("conv2d.nchwc");
  Workload c3 = conv(12, 9, 20, 3, 1, 1, 1, {"bias", "relu"});
  add_sweep(out, nchwc, c3, "x86-avx512", conv_knobs, conv_combos);
  add_sweep(out, nchwc, conv(6, 11, 18, 3, 2, 1), "x86-avx2", {}, conv_combos);
  add_sweep(out, nchwc, conv(6, 7, 10, 3, 2, 1), "arm-neon", {"oc_inner", "parallel"},
            conv_combos);
  // Grouped: output blocks that read their groups' input blocks only (channel_parts), with
  // the plane tile's channel chunks inside a part, and input blocks that do not fit a part.
  const std::vector<std::map<std::string, int64_t>> grouped_combos = {
      {{"ic_chunk", 2}, {"ic_bn", 2}, {"oc_inner", 2}, {"parallel", 2}},
      {{"ic_chunk", 4}, {"ic_bn", 4}, {"reduce_order", 1}, {"k_unroll", 2}},
      {{"ic_bn", 16}, {"oc_bn", 16}},
      {{"ic_bn", 32}}};
  add_sweep(out, nchwc, conv(32, 8, 32, 3, 1, 1, 8, {"bias", "relu"}), "x86-avx2", conv_knobs,
            grouped_combos);
  add_sweep(out, nchwc, conv(64, 6, 64, 3, 2, 1, 4), "x86-avx512", {"parallel"}, grouped_combos);
  add_sweep(out, nchwc, conv(32, 6, 32, 3, 1, 1, 8), "arm-neon", {}, grouped_combos);
  // Groups that do not fill the last block (RegNet's 55 groups of 8 in 16-channel blocks): 5
  // groups of 8 in parts of 2 (2, 2, 1 groups), and 9 groups of 4 in parts of 4 (4, 4, 1),
  // whose last part's second 8-channel input block lies past the data: clamped in, with zero
  // weights.
  add_sweep(out, nchwc, conv(40, 6, 40, 3, 2, 1, 5, {"bias", "relu"}), "x86-avx2", {},
            {{{"oc_bn", 16}, {"ic_bn", 32}}, {{"oc_bn", 16}, {"ic_bn", 8}}});
  add_sweep(out, nchwc, conv(36, 6, 36, 3, 1, 1, 9), "x86-avx2", {},
            {{{"oc_bn", 16}, {"ic_bn", 8}}, {{"oc_bn", 16}, {"ic_bn", 16}}});
  add_sweep(out, nchwc, conv(40, 6, 40, 3, 1, 1, 5), "arm-neon", {},
            {{{"oc_bn", 16}, {"ic_bn", 16}}, {{"oc_bn", 4}, {"ic_bn", 8}}});
  const OpTemplate& one = schedules::template_named("conv2d.1x1");
  add_sweep(out, one, conv(24, 7, 40, 1, 2, 0), "x86-avx512", {"k_unroll", "oc_inner", "parallel"},
            {{{"oc_inner", 2}, {"parallel", 2}, {"k_unroll", 8}, {"ic_bn", 8}}});
  add_sweep(out, one, conv(16, 5, 12, 1, 1, 0), "arm-neon", {},
            {{{"oc_inner", 2}, {"parallel", 2}, {"k_unroll", 8}}});
  // Pixel blocks, K chunks and weight streams (conv2d/pixel_blocks.h) on small planes: 49
  // and 99 pixels (partial tiles and blocks), 150 and 200 channels (K chunks that do not
  // divide the channel blocks), outputs that are not whole blocks.
  const std::vector<std::string> block_knobs = {"block_tiles", "kc", "weight_streams"};
  const std::vector<std::map<std::string, int64_t>> block_combos = {
      {{"block_tiles", 4}, {"kc", 64}, {"weight_streams", 4}, {"oc_bn", 64}, {"reg_n", 5},
       {"ic_bn", 16}, {"k_unroll", 4}},
      {{"block_tiles", 16}, {"kc", 128}, {"weight_streams", 2}, {"oc_inner", 2}, {"reg_n", 3},
       {"parallel", 2}},
      {{"block_tiles", 2}, {"kc", 64}, {"oc_inner", 1}, {"ic_bn", 8}, {"reg_n", 7}}};
  add_sweep(out, one, conv(200, 7, 50, 1, 1, 0, 1, {"bias", "residual"}), "x86-avx512",
            block_knobs, block_combos);
  add_sweep(out, one, conv(150, 10, 19, 1, 2, 0, 1, {"bias", "relu6"}), "x86-avx2", block_knobs,
            {block_combos[1]});
  add_sweep(out, one, conv(72, 7, 20, 1, 1, 0, 1, {"bias"}), "arm-neon", {"kc"},
            {{{"block_tiles", 4}, {"kc", 64}, {"weight_streams", 4}, {"oc_bn", 16}, {"reg_n", 5},
              {"ic_bn", 16}, {"k_unroll", 4}},
             block_combos[2]});
  const OpTemplate& dw = schedules::template_named("conv2d.depthwise");
  add_sweep(out, dw, conv(40, 10, 40, 3, 1, 1, 40), "x86-avx512",
            {"unroll_kh", "oc_inner", "parallel"});
  add_sweep(out, dw, conv(12, 9, 12, 3, 2, 1, 12), "arm-neon", {},
            {{{"oc_inner", 2}, {"parallel", 2}, {"unroll_kh", 1}}});
  // The low-precision conv templates share the tile's loop order and parallel knobs.
  Workload bf16 = conv(16, 7, 40, 3, 1, 1);
  bf16.dtype = DataType::bf16();
  add_sweep(out, schedules::template_named("conv2d.bf16.x86"), bf16, test::kX86Bf16,
            {"oc_inner", "parallel"});
  Workload f16 = conv(8, 6, 16, 3, 1, 1);
  f16.dtype = DataType::f16();
  add_sweep(out, schedules::template_named("conv2d.f16.arm"), f16, "arm-fp16", {},
            {{{"oc_inner", 2}, {"parallel", 2}}});
  // Softmax's three row strategies (2: the row buffer), rows of 197 (ViT's tokens, a tail
  // in every split), f32 and half.
  const OpTemplate& softmax = schedules::template_named("softmax.rows");
  const Workload rows{"softmax", {{"M", 7}, {"N", 197}}, DataType::f32(), {}};
  for (const char* target : {"x86-avx2", "arm-neon"})
    add_sweep(out, softmax, rows, target, {"row_fused", "partials", "parallel"});
  Workload half_rows = rows;
  half_rows.dtype = DataType::f16();
  add_sweep(out, softmax, half_rows, "arm-fp16", {"row_fused"});
  return out;
}

class KnobSweepTest : public ::testing::TestWithParam<SweepCase> {};

TEST_P(KnobSweepTest, MatchesReference) {
  const SweepCase& c = GetParam();
  ASSERT_TRUE(c.tpl->applies(c.w, target_from_name(c.target)))
      << c.tpl->name() << " on " << c.target;
  std::string skip = check_template_config(*c.tpl, c.w, c.target, c.cfg);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Knobs, KnobSweepTest, ::testing::ValuesIn(cases()), sweep_case_name);

// The widened spaces stay within what a tuner searches without enumerating (size() is a
// product), and are wide enough to be worth a model: 10^4 or more on a large layer.
TEST(KnobSweepSpaces, LargeLayersHaveWideSpaces) {
  Target t = target_from_name("x86-avx512");
  EXPECT_GE(schedules::dense_packed_template().space(dense(1024, 1024, 1024), t).size(), 10000u);
  EXPECT_GE(schedules::template_named("conv2d.nchwc").space(conv(64, 56, 64, 3, 1, 1), t).size(),
            10000u);
  // No K block that does not split K, no row block wider than M.
  schedules::ConfigSpace small = schedules::dense_packed_template().space(dense(1, 64, 32), t);
  for (const schedules::Knob& k : small.knobs()) {
    if (k.name == "kc") EXPECT_EQ(k.choices, std::vector<int64_t>{0});
    if (k.name == "mc_tiles") EXPECT_EQ(k.choices, std::vector<int64_t>{1});
  }
}

}  // namespace
}  // namespace kiln::testing
