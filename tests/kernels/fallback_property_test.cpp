// The key property of the operator library: for every registered template, every target
// preset where it applies and a sweep of awkward shapes (channel counts 1 to 65, odd spatial
// sizes, M/N/K 1 to 65, elementwise sizes), the fallback config is a point of the template's
// own ConfigSpace. That check is cheap and runs over the whole sweep. Building and running
// against the reference is not: the default run builds a deterministic sample of fallbacks
// on the x86 presets natively; the `slow` build of this file (KILN_FALLBACK_SLOW) builds a
// bigger sample, random configs of each space too, and the ARM presets under qemu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

#include "compiler/base/error.h"
#include "schedules/elementwise/cast.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/elementwise/qlinear_add.h"
#include "schedules/elementwise/quantize.h"
#include "schedules/registry.h"
#include "schedules/shape_form.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;
using Shape = std::vector<int64_t>;

#ifdef KILN_FALLBACK_SLOW
constexpr bool kSlow = true;
#else
constexpr bool kSlow = false;
#endif

const Shape kOdd = {1, 3, 5, 7, 13, 15};

Shape one_to_65() {
  Shape v;
  for (int64_t i = 1; i <= 65; ++i) v.push_back(i);
  return v;
}

void put(Workload& w, const std::string& prefix, const Shape& v) {
  for (size_t i = 0; i < v.size(); ++i) w.params[prefix + std::to_string(i)] = v[i];
}

// Shapes of one op family, without dtype (filled in per template).
std::vector<Workload> matmul_shapes(const std::string& op) {
  std::vector<Shape> mnk;
  for (int64_t v : one_to_65()) {
    mnk.push_back({v, 17, 33});
    mnk.push_back({13, v, 9});
    mnk.push_back({7, 31, v});
  }
  for (int64_t m : kOdd)
    for (int64_t n : kOdd)
      for (int64_t k : kOdd) mnk.push_back({m, n, k});
  std::vector<Workload> out;
  for (const Shape& s : mnk) {
    if (op == "dense") {
      out.push_back({"dense", {{"M", s[0]}, {"N", s[1]}, {"K", s[2]}}, DataType::f32(), {}});
      continue;
    }
    for (int t = 0; t < 4; ++t)
      out.push_back({"batch_matmul",
                     {{"B", 1 + t % 3}, {"M", s[0]}, {"N", s[1]}, {"K", s[2]},
                      {"transpose_a", t & 1}, {"transpose_b", (t >> 1) & 1}},
                     DataType::f32(),
                     {}});
  }
  return out;
}

Workload conv(int64_t c, int64_t h, int64_t w, int64_t o, int64_t k, int64_t stride, int64_t pad,
              int64_t groups) {
  return {"conv2d",
          {{"N", 1}, {"C", c}, {"H", h}, {"W", w}, {"O", o}, {"KH", k}, {"KW", k},
           {"stride", stride}, {"pad", pad}, {"dilation", 1}, {"groups", groups}},
          DataType::f32(),
          {}};
}

std::vector<Workload> conv_shapes() {
  std::vector<Workload> out;
  for (int64_t ch : one_to_65())
    for (int64_t hw : kOdd) {
      const int64_t k = hw >= 3 ? 3 : 1;
      out.push_back(conv(ch, hw, hw, 9, k, 1, k / 2, 1));      // C sweep
      out.push_back(conv(7, hw, hw + 2, ch, k, 2, k / 2, 1));  // O sweep, stride 2
      out.push_back(conv(ch, hw, hw, ch, 1, 1, 0, 1));         // 1x1
      out.push_back(conv(ch, hw, hw, ch, k, 1, k / 2, ch));    // depthwise
    }
  return out;
}

std::vector<Workload> pool_shapes() {
  std::vector<Workload> out;
  for (int64_t c : one_to_65())
    for (int64_t hw : kOdd) {
      const int64_t k = hw >= 3 ? 3 : 1, s = hw >= 3 ? 2 : 1, p = k / 2;
      for (const char* op : {"max_pool2d", "avg_pool2d"})
        out.push_back({op,
                       {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw + 2}, {"KH", k}, {"KW", k},
                        {"SH", s}, {"SW", s}, {"PH", p}, {"PW", p}},
                       DataType::f32(),
                       {}});
      out.push_back({"global_avg_pool2d", {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}}, DataType::f32(), {}});
      out.push_back({"batch_norm", {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}}, DataType::f32(), {}});
      for (int64_t block : {4, 8, 16}) {
        for (int64_t dir : {0, 1})
          out.push_back({"layout_transform",
                         {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"block", block}, {"direction", dir}},
                         DataType::f32(),
                         {}});
        // Re-blocking from one NCHW[x]c to another.
        out.push_back({"layout_transform",
                       {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"src_block", block},
                        {"block", block == 16 ? 4 : 2 * block}, {"direction", 2}},
                       DataType::f32(),
                       {}});
      }
      for (int64_t linear : {0, 1})
        out.push_back({"resize",
                       {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw + 2}, {"OH", 2 * hw}, {"OW", hw + 5},
                        {"linear", linear}},
                       DataType::f32(),
                       {}});
      out.push_back({"conv2d_transpose",
                     {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", (c % 7) + 1}, {"KH", 2},
                      {"KW", 3}, {"SH", 2}, {"SW", 1}},
                     DataType::f32(),
                     {}});
      for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "arg_max",
                             "arg_min", "cumsum"})
        out.push_back({op, {{"outer", hw}, {"reduced", c}, {"inner", hw + 1}}, DataType::f32(), {}});
    }
  return out;
}

// Attention: each size swept from 1 to 65 with the others odd, and long rows of keys.
std::vector<Workload> attention_shapes() {
  auto w = [](int64_t b, int64_t m, int64_t n, int64_t d, int64_t e) {
    return Workload{
        "attention", {{"B", b}, {"M", m}, {"N", n}, {"D", d}, {"E", e}}, DataType::f32(), {}};
  };
  std::vector<Workload> out;
  for (int64_t v : one_to_65()) {
    out.push_back(w(2, v, 19, 8, 9));
    out.push_back(w(1, 11, v, 7, 16));
    out.push_back(w(3, 5, 23, v, 3));
    out.push_back(w(1, 9, 13, 5, v));
  }
  for (int64_t n : {1214, 4096, 16384, 16385}) out.push_back(w(2, 7, n, 4, 8));
  return out;
}

std::vector<Workload> row_shapes() {
  std::vector<Workload> out;
  for (int64_t n : one_to_65())
    for (int64_t m : kOdd)
      for (const char* op : {"softmax", "layer_norm"})
        out.push_back({op, {{"M", m}, {"N", n}}, DataType::f32(), {}});
  return out;
}

std::vector<Workload> elementwise_shapes(const std::string& op, bool binary) {
  std::vector<Shape> shapes;
  for (int64_t n : one_to_65()) shapes.push_back({n});
  for (int64_t a : kOdd)
    for (int64_t b : {1, 16, 17, 63, 65, 1000}) shapes.push_back({a, b});
  std::vector<Workload> out;
  for (const Shape& s : shapes) {
    Workload w{op, {{"rank", static_cast<int64_t>(s.size())}}, DataType::f32(), {}};
    if (op == "elementwise_chain") w.epilogue = {"add", "relu"};
    put(w, "a", s);
    if (binary || op == "elementwise_chain" || op == "where") put(w, "b", s);
    if (op == "where") put(w, "c", s);
    if (op == "clip") w.params["lo"] = -0.5, w.params["hi"] = 0.7;
    out.push_back(w);
  }
  return out;
}

// Embedding-like lookups: tables of 1..65 rows, rows of 1 to 100 values, 1 to 4 outer slices.
std::vector<Workload> gather_shapes() {
  std::vector<Workload> out;
  for (int64_t n : one_to_65())
    for (int64_t inner : {1, 16, 17, 100})
      out.push_back({"gather", {{"outer", 1 + n % 4}, {"N", n}, {"inner", inner}, {"K", 1 + n % 7}},
                     DataType::f32(), {}});
  return out;
}

std::vector<Workload> data_movement_shapes() {
  std::vector<Workload> out;
  for (int64_t c : one_to_65())
    for (int64_t hw : {1, 5, 13}) {
      Workload concat{"concat", {{"ndim", 3}, {"axis", 0}, {"inputs", 2}}, DataType::f32(), {}};
      put(concat, "D", {c + 3, hw, hw});
      put(concat, "E", {c, 3});
      out.push_back(concat);
      Workload transpose{"transpose", {{"ndim", 3}}, DataType::f32(), {}};
      put(transpose, "D", {c, hw, 7});
      put(transpose, "P", {2, 0, 1});
      out.push_back(transpose);
      Workload pad{"pad", {{"ndim", 3}, {"value", -1.5}}, DataType::f32(), {}};
      put(pad, "D", {c, hw, hw});
      put(pad, "B", {0, 1, 2});
      put(pad, "A", {1, 0, 2});
      out.push_back(pad);
      Workload slice{"slice", {{"ndim", 3}}, DataType::f32(), {}};
      put(slice, "D", {c + 2, hw, hw + 4});
      put(slice, "S", {1, 0, 2});
      put(slice, "T", {1, 1, 2});
      put(slice, "O", {c, hw, 2});
      out.push_back(slice);
      Workload reshape{"reshape", {{"ndim", 3}, {"ondim", 2}}, DataType::f32(), {}};
      put(reshape, "D", {c, hw, 2});
      put(reshape, "O", {c * hw, 2});
      out.push_back(reshape);
      // Two inputs of c channels (one of them in blocks of 8, partial where c is not a
      // multiple), shuffled in 2 groups into NCHW or blocks of 8.
      Workload shuffle{"channel_shuffle",
                       {{"N", 1 + c % 2},
                        {"HW", hw},
                        {"group", 2},
                        {"block", (2 * c) % 8 == 0 ? 8 : 1},
                        {"inputs", 2}},
                       DataType::f32(),
                       {}};
      put(shuffle, "E", {c, c});
      put(shuffle, "B", {c % 3 == 0 ? 4 : 1, 8});
      out.push_back(shuffle);
    }
  return out;
}

// Casts both ways, of a short tail, an odd size and enough elements to go parallel.
std::vector<Workload> cast_shapes() {
  std::vector<Workload> out;
  for (int64_t n : {1, 13, 1000, 70000})
    for (bool to_f32 : {false, true})
      out.push_back(schedules::cast_workload(n, DataType::bf16(), to_f32));
  return out;
}

// The sweep's shapes of `tpl`'s op (f32; the caller sets each dtype).
std::vector<Workload> shapes_for(const OpTemplate& tpl) {
  const std::string op = tpl.op();
  std::vector<Workload> all;
  if (op == "dense" || op == "batch_matmul") all = matmul_shapes(op);
  else if (op == "conv2d") all = conv_shapes();
  else if (op == "softmax" || op == "layer_norm") all = row_shapes();
  else if (op == "attention")
    all = attention_shapes();
  else if (op == "cast") all = cast_shapes();
  else if (op == "quantize" || op == "dequantize") {
    for (int64_t n : {1, 13, 1000})
      all.push_back(schedules::quantize_workload(op, n, DataType::u8(), 0.0078125, 128));
  } else if (op == "qlinear_add") {
    for (int64_t n : {1, 13, 1000})
      all.push_back(schedules::qlinear_add_workload(n, DataType::u8(), {0.5, 0.3, 3.0}));
  } else if (op == "concat" || op == "transpose" || op == "pad" || op == "reshape" ||
             op == "slice" || op == "channel_shuffle")
    all = data_movement_shapes();
  else if (op == "gather") all = gather_shapes();
  else if (schedules::shape_form(op).empty()) {
    bool binary = false;
    for (const std::string& b : schedules::elementwise_binary_ops()) binary |= b == op;
    return elementwise_shapes(op, binary);
  } else {
    all = pool_shapes();
  }
  std::vector<Workload> mine;
  for (const Workload& w : all)
    if (w.op == op) mine.push_back(w);
  return mine;
}

struct SweepCase {
  const OpTemplate* tpl;
  Workload w;
  std::string target;
};

// Every (dtype, preset, shape) of the sweep that `tpl` takes: it applies, and the workload is
// valid for it (a window larger than its input is not a case). `limit` cases at most, drawn
// in a fixed shuffled order when it is set.
std::vector<SweepCase> sweep_of(const OpTemplate& tpl, size_t limit = SIZE_MAX,
                                const std::set<std::string>& presets = {}) {
  std::vector<SweepCase> all;
  std::vector<Workload> shapes = shapes_for(tpl);
  for (const std::string& preset : target_preset_names()) {
    if (!presets.empty() && !presets.count(preset)) continue;
    for (DataType dtype : tpl.swept_dtypes())
      for (Workload w : shapes) {
        w.dtype = dtype;
        all.push_back({&tpl, w, preset});
      }
  }
  if (limit != SIZE_MAX) std::shuffle(all.begin(), all.end(), std::mt19937_64(2026));
  std::vector<SweepCase> out;
  for (const SweepCase& c : all) {
    if (out.size() >= limit) break;
    const Target target = target_from_name(c.target);
    try {
      if (!tpl.applies(c.w, target)) continue;
      tpl.validate(c.w, target);
    } catch (const UserError&) {
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// One test per template (ctest runs them side by side), named after it.
std::vector<std::string> template_names() {
  std::vector<std::string> out;
  for (const OpTemplate* tpl : schedules::all_templates()) out.push_back(tpl->name());
  return out;
}

class FallbackProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(FallbackProperty, EveryFallbackOfTheSweepIsInsideItsSpace) {
  const OpTemplate& tpl = schedules::template_named(GetParam());
  const std::vector<SweepCase> cases = sweep_of(tpl);
  size_t outside = 0;
  for (const SweepCase& c : cases) {
    const Target target = target_from_name(c.target);
    const schedules::Config fallback = tpl.fallback(c.w, target);
    const schedules::ConfigSpace space = tpl.space(c.w, target);
    if (space.contains(fallback)) continue;
    if (outside++) continue;  // the first case names the problem; the count says the rest
    std::string why;
    try {
      space.validate(fallback);
    } catch (const UserError& e) {
      why = e.what();
    }
    ADD_FAILURE() << c.w.str() << " on " << c.target << ": fallback " << fallback.to_json()
                  << " is outside its space: " << why;
  }
  EXPECT_EQ(outside, 0u) << "fallbacks outside their space, of " << cases.size() << " cases";
  // Enough cases to mean something: a template the sweep's shapes miss would pass vacuously.
  EXPECT_GE(cases.size(), 20u) << "too few sweep cases";
  std::printf("fallback property, %s: %zu cases, %zu outside\n", GetParam().c_str(),
              cases.size(), outside);
}

#ifdef KILN_FALLBACK_SLOW
// The sweep is the default run's; the slow build only builds more.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FallbackProperty);
#else
INSTANTIATE_TEST_SUITE_P(Sweep, FallbackProperty, ::testing::ValuesIn(template_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return test_name(info.param, info.index);
                         });
#endif

// Ops whose reference needs inputs of a domain (log of a positive, a variance) that
// check_template does not draw; their own suites build them.
bool builds_with_any_inputs(const std::string& op) {
  static const std::set<std::string> k = {"log", "sqrt", "pow", "reciprocal", "div", "batch_norm"};
  return !k.count(op);
}

// A deterministic sample of the sweep to build and run: per template and preset, a few cases
// drawn from its shapes (more under `slow`), the fallback and (under `slow`) a random config.
std::vector<TemplateCase> build_sample() {
  const std::vector<std::string> presets =
      kSlow ? std::vector<std::string>{"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16", "arm-bf16"}
            : std::vector<std::string>{"x86-avx2", "x86-avx512"};
  std::vector<TemplateCase> out;
  for (const OpTemplate* tpl : schedules::all_templates()) {
    if (!builds_with_any_inputs(tpl->op())) continue;
    for (const std::string& preset : presets) {
      const bool arm = preset.rfind("arm", 0) == 0;
      const size_t n = kSlow ? (arm ? 1 : 6) : (preset == "x86-avx512" ? 2 : 1);
      int seed = 0;
      for (const SweepCase& c : sweep_of(*tpl, n, {preset})) {
        // Known codegen bug, left to its owner: without AVX512-BF16, a bf16 phi or select
        // that LLVM forms (conv2d.nchwc's padding, e.g. C=7 O=35 H=15 W=17 stride 2 pad 1)
        // is promoted through __truncsfbf2, which a kernel .so cannot link.
        if (c.w.dtype == DataType::bf16() && c.target == "x86-avx2") continue;
        out.push_back({c.w, c.target, -1, c.tpl});
        if (kSlow) out.push_back({c.w, c.target, seed++, c.tpl});
      }
    }
  }
  return out;
}

class FallbackBuild : public TemplateTest {};

TEST_P(FallbackBuild, MatchesReference) { check(); }

INSTANTIATE_TEST_SUITE_P(Sample, FallbackBuild, ::testing::ValuesIn(build_sample()),
                         template_case_name);

}  // namespace
}  // namespace kiln::testing
