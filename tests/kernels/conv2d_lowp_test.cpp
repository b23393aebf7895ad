// Low-precision conv2d templates (schedules/conv2d/lowp.h): fallback and random configs
// against the reference on small, awkward shapes (odd C, stride 2, 1x1, dilation, batch 2,
// tiles that do not divide OW), bf16 and f32 outputs, epilogues; one ResNet-18 layer
// natively; f16 and bf16 (BFDOT) under qemu. Assembly checks (vdpbf16ps zmm, fmla .8h, bfdot
// .4s) and refusals (targets
// without the instructions, groups > 1). The 64->64 3x3 56x56 timing against conv2d.nchwc
// f32 is DISABLED_ (run with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/codegen/build.h"
#include "compiler/codegen/codegen.h"
#include "kiln/runtime.h"
#include "kiln/timing.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/conv2d/templates.h"
#include "schedules/registry.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/kernels/template_harness.h"
#include "tests/native_targets.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

Workload conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t k, DataType t,
              std::map<std::string, int64_t> extra = {}, std::vector<std::string> epilogue = {}) {
  Workload wl{"conv2d",
              {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"O", o}, {"KH", k}, {"KW", k}},
              t,
              std::move(epilogue)};
  for (const auto& [key, v] : extra) wl.params[key] = v;
  return wl;
}

// check_template_inputs' steps, with the blocked output unpacked (that helper compares the
// kernel's layout), read in its own type (bf16, or f32 with out_f32=1), and a looser
// tolerance for f16 accumulation.
std::string check(const OpTemplate& tpl, const Workload& w, const std::string& target,
                  const Config& cfg) {
  DataType out_t = w.param_or("out_f32", 0) ? DataType::f32() : w.dtype;
  double tol = cfg.has("f16_acc") && cfg["f16_acc"] == 1 ? 3e-2 : tolerance(w.dtype);
  if (out_t == DataType::f32() && w.dtype == DataType::bf16()) tol = 1e-2;
  SCOPED_TRACE(tpl.name() + " " + w.str() + " on " + target + " config " + cfg.to_json());
  tuner::BuiltKernel k =
      tuner::lower_template(tpl, w, target_from_name(target), cfg, "kernel");
  std::vector<schedules::Values> logical;
  std::vector<Bytes> args;
  uint32_t seed = 5;
  for (const schedules::KernelArg& a : k.args) {
    if (a.is_output) {
      args.emplace_back(static_cast<size_t>(a.kernel_elements) * out_t.bytes(), 0);
      continue;
    }
    logical.push_back(random_values(a.logical.elements(), seed++, w.dtype));
    schedules::Values packed = a.pack ? a.pack(logical.back()) : logical.back();
    EXPECT_EQ(static_cast<int64_t>(packed.size()), a.kernel_elements) << a.logical.name;
    args.push_back(encode(packed, w.dtype));
  }
  TargetRun run = run_on_target(k.func, target, args, {static_cast<int>(args.size()) - 1});
  if (!run.skip_reason.empty()) return run.skip_reason;
  schedules::Values got = k.args.back().unpack(decode(run.outputs[0], out_t));
  schedules::Values want = tpl.reference(w, logical);
  for (float& x : want) x = round_to(x, out_t);
  EXPECT_TRUE(all_close(got, want, tol));
  return "";
}

using test::kX86Bf16;

bool has_bf16_x86() {
  return host_can_run(target_from_name(kX86Bf16));
}

std::vector<Workload> small_shapes(DataType t) {
  return {
      conv(1, 6, 9, 9, 16, 3, t, {{"pad", 1}}, {"bias", "relu"}),
      conv(1, 5, 8, 8, 7, 3, t, {{"stride", 2}, {"pad", 1}}),                    // odd C, stride 2
      conv(1, 32, 7, 7, 48, 1, t, {{"out_f32", 1}}, {"bias"}),                   // 1x1
      conv(2, 8, 6, 10, 20, 3, t, {{"pad", 1}}, {"bias", "residual", "relu6"}),  // batch 2
      conv(1, 3, 12, 11, 24, 3, t, {{"pad", 2}, {"dilation", 2}}),               // C=3, dilation
  };
}

struct Case {
  const OpTemplate* tpl;
  Workload w;
  std::string target;
  int config;            // -1: fallback; otherwise a random config of the space
  int64_t f16_acc = -1;  // forced value of the f16_acc knob, when >= 0
  int64_t f16_block = -1;  // forced f16 block level (with f16_acc 2), when >= 0
};

std::vector<Case> cases() {
  const OpTemplate* x86 = &schedules::conv2d_bf16_x86_template();
  const OpTemplate* f16 = &schedules::conv2d_f16_arm_template();
  const OpTemplate* arm = &schedules::conv2d_bf16_arm_template();
  std::vector<Case> out;
  for (const Workload& w : small_shapes(DataType::bf16()))
    for (int c = -1; c < 3; ++c) out.push_back({x86, w, kX86Bf16, c});
  // Under qemu: each run costs a process start.
  std::vector<Workload> h = small_shapes(DataType::f16());
  for (size_t i = 0; i < h.size(); ++i) out.push_back({f16, h[i], "arm-fp16", i % 2 ? 0 : -1});
  out.push_back({f16, h[0], "arm-fp16", 1, 1});
  out.push_back({f16, h[3], "arm-bf16", 2, 1});
  // f32 accumulation, and f16 blocks of each level: channels, x KW, x KH (dilated, batch 2).
  out.push_back({f16, h[1], "arm-fp16", 3, 0});
  out.push_back({f16, h[0], "arm-fp16", 4, 2, 1});
  out.push_back({f16, h[4], "arm-fp16", 5, 2, 2});
  out.push_back({f16, h[3], "arm-fp16", 6, 2, 3});
  // Depthwise convs sum their taps in f16 on +fullfp16 (conv2d.depthwise's acc_type): 3x3,
  // a 7x7 of 49 products with stride 2, and channels that leave a partial vector.
  const OpTemplate* dw = &schedules::conv2d_depthwise_template();
  for (const Workload& w :
       {conv(1, 32, 10, 10, 32, 3, DataType::f16(), {{"pad", 1}, {"groups", 32}},
             {"bias", "relu6"}),
        conv(1, 24, 15, 15, 24, 7, DataType::f16(), {{"pad", 3}, {"stride", 2}, {"groups", 24}}),
        conv(1, 20, 9, 9, 20, 5, DataType::f16(), {{"pad", 2}, {"groups", 20}}, {"bias"})})
    for (int c : {-1, 0}) out.push_back({dw, w, "arm-fp16", c});
  // bf16 through BFDOT under qemu: bias+relu, odd C with stride 2, 1x1 with f32 output.
  std::vector<Workload> b = small_shapes(DataType::bf16());
  for (int i = 0; i < 3; ++i)
    for (int c : {-1, i}) out.push_back({arm, b[i], "arm-bf16", c});
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.tpl->name() << " " << c.w.str() << " on " << c.target << " config " << c.config;
}

class Conv2dLowpTest : public ::testing::TestWithParam<Case> {};

TEST_P(Conv2dLowpTest, MatchesReference) {
  const Case& c = GetParam();
  Target t = target_from_name(c.target);
  ASSERT_TRUE(c.tpl->applies(c.w, t));
  Config cfg = template_config(*c.tpl, c.w, t, c.config);
  if (c.f16_acc >= 0) cfg.set("f16_acc", c.f16_acc);
  if (c.f16_block >= 0) cfg.set("f16_block", c.f16_block);
  std::string skip = check(*c.tpl, c.w, c.target, cfg);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

std::string name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return test_name(c.tpl->name() + "_" + c.w.str() + "_" + c.target + "_" +
                       (c.config < 0 ? "fallback" : "cfg" + std::to_string(c.config)) +
                       (c.f16_acc == 1 ? "_f16acc" : "") +
                       (c.f16_block >= 0 ? "_block" + std::to_string(c.f16_block) : ""),
                   info.index);
}

INSTANTIATE_TEST_SUITE_P(Conv2dLowp, Conv2dLowpTest, ::testing::ValuesIn(cases()), name);

// Every knob value of the bf16 space produces correct code (a stride coprime to the radixes
// walks every value of every knob).
TEST(Conv2dLowpSpace, EveryBf16ConfigOnAnOddShape) {
  const OpTemplate& t = schedules::conv2d_bf16_x86_template();
  Target x86 = target_from_name(kX86Bf16);
  Workload w = conv(1, 7, 5, 9, 20, 3, DataType::bf16(), {{"pad", 1}}, {"bias"});
  ASSERT_TRUE(t.applies(w, x86));
  schedules::ConfigSpace cs = t.space(w, x86);
  for (uint64_t i = 0; i < cs.size(); i += 37) {
    std::string skip = check(t, w, kX86Bf16, cs.at(i));
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Conv2dLowpLayers, ResNet18Conv64x56Fallback) {
  const OpTemplate& t = schedules::conv2d_bf16_x86_template();
  Workload w = conv(1, 64, 56, 56, 64, 3, DataType::bf16(), {{"pad", 1}}, {"bias", "relu"});
  if (!has_bf16_x86()) GTEST_SKIP() << "no avx512bf16 here";
  Target x86 = target_from_name(kX86Bf16);
  std::string skip = check(t, w, kX86Bf16, t.fallback(w, x86));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(Conv2dLowpErrors, TargetsWithoutTheInstructionsAndGroupsAreRefused) {
  struct No {
    const OpTemplate* tpl;
    Workload w;
    const char* target;
  };
  const OpTemplate* x86 = &schedules::conv2d_bf16_x86_template();
  const OpTemplate* f16 = &schedules::conv2d_f16_arm_template();
  const OpTemplate* arm = &schedules::conv2d_bf16_arm_template();
  const DataType bf = DataType::bf16(), h = DataType::f16();
  Workload grouped = conv(1, 8, 6, 6, 8, 3, bf, {{"groups", 2}, {"pad", 1}});
  Workload grouped_h = conv(1, 8, 6, 6, 8, 3, h, {{"groups", 2}, {"pad", 1}});
  std::vector<No> refused = {
      {x86, conv(1, 8, 6, 6, 16, 3, bf), "x86-avx2"},
      {x86, conv(1, 8, 6, 6, 16, 3, bf), "arm-neon"},
      {x86, conv(1, 8, 6, 6, 16, 3, bf), "arm-bf16"},
      {x86, conv(1, 8, 6, 6, 16, 3, bf), "x86-avx512"},  // the preset has no avx512bf16
      {x86, grouped, kX86Bf16},
      {x86, conv(1, 8, 6, 6, 16, 3, DataType::f32()), "x86-avx512"},
      {f16, conv(1, 8, 6, 6, 16, 3, h), "arm-neon"},
      {f16, conv(1, 8, 6, 6, 16, 3, h), "x86-avx512"},
      {f16, conv(1, 8, 6, 6, 16, 3, bf), "arm-bf16"},
      {f16, grouped_h, "arm-fp16"},
      {arm, conv(1, 8, 6, 6, 16, 3, bf), "arm-neon"},  // no +bf16
      {arm, conv(1, 8, 6, 6, 16, 3, bf), "arm-fp16"},
      {arm, conv(1, 8, 6, 6, 16, 3, bf), "x86-avx512"},
      {arm, conv(1, 8, 6, 6, 16, 3, h), "arm-bf16"},
      {arm, grouped, "arm-bf16"},
  };
  for (const No& n : refused) {
    SCOPED_TRACE(n.tpl->name() + " " + n.w.str() + " on " + n.target);
    Target t = target_from_name(n.target);
    EXPECT_FALSE(n.tpl->applies(n.w, t));
    EXPECT_THROW(n.tpl->instantiate(n.w, t, n.tpl->fallback(n.w, t)), UserError);
  }
}

TEST(Conv2dLowpErrors, BadConfigsAndEpilogues) {
  const OpTemplate& t = schedules::conv2d_f16_arm_template();
  Target arm = target_from_name("arm-fp16");
  Workload ok = conv(1, 8, 6, 6, 16, 3, DataType::f16());
  Config cfg = t.fallback(ok, arm);
  cfg.set("oc_bn", 12);
  EXPECT_THROW(t.instantiate(ok, arm, cfg), UserError);
  Workload bad = conv(1, 8, 6, 6, 16, 3, DataType::f16(), {}, {"softplus"});
  EXPECT_THROW(t.instantiate(bad, arm, t.fallback(ok, arm)), UserError);
  const OpTemplate& x = schedules::conv2d_bf16_x86_template();
  Target x86 = target_from_name(kX86Bf16);
  Workload okb = conv(1, 8, 6, 6, 16, 3, DataType::bf16());
  Config odd = x.fallback(okb, x86);
  odd.set("ic_bn", 3);  // not a pair block: outside the space
  EXPECT_THROW(x.instantiate(okb, x86, odd), UserError);
}

TEST(Conv2dLowpRegistry, PreferredWhereTheyApply) {
  auto first = [](const Workload& w, const char* target) {
    return schedules::templates_for(w, target_from_name(target)).front()->name();
  };
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::f16()), "arm-fp16"), "conv2d.f16.arm");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::bf16()), "arm-bf16"), "conv2d.bf16.arm");
  EXPECT_NE(first(conv(1, 8, 6, 6, 16, 3, DataType::bf16()), "arm-neon"), "conv2d.bf16.arm");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::bf16()), "x86-avx2"), "conv2d.nchwc");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::f32()), "x86-avx512"), "conv2d.nchwc");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 8, 3, DataType::bf16(), {{"groups", 2}}), "x86-avx512"),
            "conv2d.nchwc");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::bf16()), "x86-avx512"), "conv2d.nchwc");
  EXPECT_EQ(first(conv(1, 8, 6, 6, 16, 3, DataType::bf16()), kX86Bf16), "conv2d.bf16.x86");
}

TEST(Conv2dLowpPacking, VnniWeights) {
  // O=2, C=3, 1x1; w[o][c] = 10o + c; icb 4 (C zero-padded), ocb 2.
  schedules::Workload w = conv(1, 3, 1, 1, 2, 1, DataType::bf16());
  schedules::Conv2dParams p = schedules::conv2d_params(w);
  auto v = schedules::pack_conv_weight_vnni({0, 1, 2, 10, 11, 12}, p, 4, 2);
  // [1][1][1][1][2 pairs][2 o][2]
  EXPECT_EQ(v, (std::vector<float>{0, 1, 10, 11, 2, 0, 12, 0}));
}



TEST(Conv2dLowpAsm, X86Bf16UsesVdpbf16psOnZmm) {
  Workload w = conv(1, 64, 56, 56, 64, 3, DataType::bf16(), {{"pad", 1}});
  std::string s = template_assembly(schedules::conv2d_bf16_x86_template(), w, kX86Bf16);
  // Fallback: 8 pixels x 2 zmm, 4 channel pairs per iteration, 3 taps unrolled.
  EXPECT_GE(count_instructions(s, "vdpbf16ps", "zmm"), 8 * 2 * 4) << s;
  EXPECT_EQ(count_instructions(s, "vdpbf16ps", "rsp"), 0) << "accumulators spilled to the stack";
}

TEST(Conv2dLowpAsm, ArmF16AccumulationUsesFmla8h) {
  Workload w = conv(1, 16, 8, 8, 16, 3, DataType::f16(), {{"pad", 1}});
  std::string s = template_assembly(schedules::conv2d_f16_arm_template(), w, "arm-fp16", {{"f16_acc", 1}});
  EXPECT_GE(count_instructions(s, "fmla", ".8h"), 8) << s;
  std::string f32 = template_assembly(schedules::conv2d_f16_arm_template(), w, "arm-fp16", {{"f16_acc", 0}});
  EXPECT_EQ(count_instructions(f32, "fmla", ".8h"), 0) << "f16_acc 0 accumulates in f32:\n" << f32;
  EXPECT_GE(count_instructions(f32, "fmla", ".4s"), 8) << f32;
}

// The default: `fmla .8h` within a block (2 vectors x 4 pixels per channel and tap), the block's
// sums widened and added into f32 (fadd .4s), never `fmla .4s`.
TEST(Conv2dLowpAsm, ArmF16DefaultUsesFmla8hWithF32PartialSums) {
  Workload w = conv(1, 64, 8, 8, 64, 3, DataType::f16(), {{"pad", 1}});
  std::string d = template_assembly(schedules::conv2d_f16_arm_template(), w, "arm-fp16");
  EXPECT_GE(count_instructions(d, "fmla", ".8h"), 2 * 4 * 3) << d;  // the 3 taps unrolled
  EXPECT_EQ(count_instructions(d, "fmla", ".4s"), 0) << d;
  EXPECT_GE(count_instructions(d, "fadd", ".4s"), 16) << d;
}

// The channels of a block are unrolled by 8, so one pixel's 8 input values are neighbours: one
// vector load brings them and each `fmla .8h` takes its value as a lane (v.h[i]). No `ld1r`
// is left to share the FMLAs' vector pipe (lane_broadcasts.h): 100% of a Neoverse-N1's
// `fmla .8h` peak by llvm-mca, 63% with the broadcasts.
TEST(Conv2dLowpAsm, ArmF16TakesInputsAsLanesOfOneLoad) {
  Workload w = conv(1, 64, 8, 8, 64, 3, DataType::f16(), {{"pad", 1}});
  for (const char* target : {"arm-fp16", "neoverse-n1"}) {
    std::string d = template_assembly(schedules::conv2d_f16_arm_template(), w, target);
    EXPECT_GE(count_instructions(d, "fmla", ".h["), 2 * 4 * 8) << target << "\n" << d;
    EXPECT_EQ(count_instructions(d, "ld1r", ".8h"), 0) << target << "\n" << d;
  }
  // Channel blocks of 4 (a 4-channel input) take lanes of a 64-bit load.
  Workload narrow = conv(1, 4, 8, 8, 16, 3, DataType::f16(), {{"pad", 1}});
  std::string n =
      template_assembly(schedules::conv2d_f16_arm_template(), narrow, "arm-fp16", {{"ic_bn", 4}});
  EXPECT_EQ(count_instructions(n, "ld1r", ".8h"), 0) << n;
}

TEST(Conv2dLowpAsm, ArmBf16UsesBfdot) {
  Workload w = conv(1, 16, 8, 8, 16, 3, DataType::bf16(), {{"pad", 1}});
  const OpTemplate& t = schedules::conv2d_bf16_arm_template();
  // Fallback: 16 output channels (4 q registers) x 4 pixels (divides OW 8), 4 channel pairs
  // per iteration, 3 taps unrolled. Serial: a parallel loop's closure is built with q-register
  // copies on the stack, outside the loop this looks at.
  std::string s = template_assembly(t, w, "arm-bf16", {{"parallel", 0}});
  EXPECT_GE(count_instructions(s, "bfdot", ".4s"), 4 * 4 * 4) << s;
  // The 4 pairs of a pixel come in one load, and each BFDOT takes its pair as a lane
  // (v.2h[i], lane_broadcasts.h): no `ld1r` or `dup` of a pair. No vector register goes
  // through the stack.
  EXPECT_GE(count_instructions(s, "bfdot", ".2h["), 4 * 4 * 4) << s;
  EXPECT_EQ(count_instructions(s, "ld1r", ".4s"), 0) << s;
  EXPECT_EQ(count_instructions(s, "dup", ".4s"), 0) << s;
  const std::regex vector_reg(R"(\b[qv][0-9]+\b)");
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (line.find("[sp") != std::string::npos)
      EXPECT_FALSE(std::regex_search(line, vector_reg)) << "vector spill: " << line;
  // A 4-lane block: one accumulator per pixel.
  std::string one = template_assembly(t, w, "arm-bf16", {{"oc_bn", 4}});
  EXPECT_GE(count_instructions(one, "bfdot", ".4s"), 4) << one;
}

// Measured, not asserted: single thread, median of timed batches.
double gflops(const OpTemplate& tpl, const Workload& w, const Target& t, int threads,
              Config cfg = {}) {
  if (cfg.values().empty()) cfg = tpl.fallback(w, t);
  cfg.set("parallel", threads > 1 ? 1 : 0);
  tuner::BuiltKernel k = tuner::lower_template(tpl, w, t, cfg, "kernel");
  auto dir = std::filesystem::temp_directory_path() / ("kiln-cvlp-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string so = (dir / "k.so").string();
  codegen::build_shared_object({k.func}, t, so);
  ThreadPool pool(threads);
  KernelModule mod(so, pool);
  std::vector<AlignedBuffer> bufs;
  std::vector<void*> ptrs;
  for (const schedules::KernelArg& a : k.args) {
    bufs.emplace_back(static_cast<size_t>(a.kernel_elements) * 4);
    std::memset(bufs.back().data(), 0x3c, bufs.back().size());  // small finite values
  }
  for (AlignedBuffer& b : bufs) ptrs.push_back(b.data());
  TimingOptions timing;
  timing.warmup = 3;
  timing.repeat = 7;
  timing.min_repeat_ms = 50;
  const double seconds = time_calls([&] { mod.call("kernel", ptrs.data()); }, timing).median();
  std::filesystem::remove_all(dir);
  std::printf("%-16s %-44s %s: %.3f ms, %.1f GFLOPS\n", tpl.name().c_str(), w.str().c_str(),
              cfg.to_json().c_str(), seconds * 1e3, k.flops / seconds * 1e-9);
  return k.flops / seconds * 1e-9;
}

TEST(Conv2dLowpPerf, DISABLED_Bf16VersusF32ResNet64x56) {
  Target t = target_from_name(kX86Bf16);
  if (!has_bf16_x86()) GTEST_SKIP() << "no avx512bf16";
  Workload f = conv(1, 64, 56, 56, 64, 3, DataType::f32(), {{"pad", 1}});
  Workload b = conv(1, 64, 56, 56, 64, 3, DataType::bf16(), {{"pad", 1}});
  double f32 = gflops(schedules::conv2d_nchwc_template(), f, t, 1);
  double b16 = gflops(schedules::conv2d_bf16_x86_template(), b, t, 1);
  std::printf("bf16 / f32: %.2fx\n", b16 / f32);
}

// A bounded local search around the bf16 fallback, same conditions.
TEST(Conv2dLowpPerf, DISABLED_Bf16LocalSearchResNet64x56) {
  Target t = target_from_name(kX86Bf16);
  if (!has_bf16_x86()) GTEST_SKIP() << "no avx512bf16";
  Workload b = conv(1, 64, 56, 56, 64, 3, DataType::bf16(), {{"pad", 1}});
  const OpTemplate& tpl = schedules::conv2d_bf16_x86_template();
  double best = 0;
  for (int64_t reg_n : {7, 8, 14})
    for (int64_t icb : {16, 32, 64})
      for (int64_t ku : {2, 4})
        for (int64_t inner : {0, 1}) {
          Config c = tpl.fallback(b, t);
          c.set("reg_n", reg_n), c.set("ic_bn", icb), c.set("k_unroll", ku);
          c.set("oc_inner", inner);
          best = std::max(best, gflops(tpl, b, t, 1, c));
        }
  std::printf("best bf16 %.1f GFLOPS\n", best);
}

}  // namespace
}  // namespace kiln::testing
