// elementwise.flat.<op>: every unary and binary op and fused chains, on every target preset
// (ARM under qemu) and dtype, over broadcasting patterns (same shape, scalar, trailing,
// leading, middle, both-sided) and awkward sizes, with the fallback and random configs;
// plus the errors a bad workload must give.
//
// Inputs come from each op's domain (log, sqrt, pow, div and reciprocal get values in
// [0.5, 2]), so the check below draws its own inputs instead of the shared [-1, 1] ones;
// a few ops also go through the shared check_template path.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/target/target.h"
#include "compiler/base/error.h"
#include "compiler/ir/printer.h"
#include "tests/kernels/kernel_harness.h"
#include "schedules/dense/dense.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/registry.h"
#include "tests/kernels/template_harness.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

// A workload from per-operand shapes (all of one rank).
Workload ew(const std::string& op, const std::vector<std::vector<int64_t>>& shapes,
            DataType t = DataType::f32(), std::vector<std::string> steps = {}) {
  Workload w{op, {}, t, std::move(steps)};
  w.params["rank"] = static_cast<int64_t>(shapes[0].size());
  for (size_t o = 0; o < shapes.size(); ++o)
    for (size_t d = 0; d < shapes[o].size(); ++d)
      w.params[std::string(1, char('a' + o)) + std::to_string(d)] = shapes[o][d];
  return w;
}

bool needs_positive(const Workload& w) {
  std::vector<std::string> steps = w.epilogue;
  steps.push_back(w.op);
  for (const std::string& s : steps)
    if (s == "log" || s == "sqrt" || s == "pow" || s == "div" || s == "reciprocal") return true;
  return false;
}

// check_template with inputs from the op's domain: fallback for seed < 0, else a random
// config.
std::string check_in_domain(const Workload& w, const std::string& target, int seed) {
  const schedules::OpTemplate& tpl = schedules::elementwise_flat_template(w.op);
  InputCheck check{11, nullptr, w.dtype, tolerance(w.dtype)};
  if (needs_positive(w))
    check.adjust = [&w](const schedules::KernelArg&, schedules::Values& v) {
      for (float& x : v) x = round_to(1.25f + 0.75f * x, w.dtype);
    };
  schedules::Config cfg = template_config(tpl, w, target_from_name(target), seed);
  return check_template_inputs(tpl, w, target, cfg, check);
}

const std::vector<std::string> kTargets = {"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16",
                                           "arm-bf16"};

// Broadcasting patterns for binary ops: [a shape, b shape].
std::vector<std::vector<std::vector<int64_t>>> broadcasts() {
  return {
      {{7, 129}, {7, 129}},        // same shape: one flat loop
      {{33, 65}, {1, 1}},          // scalar operand
      {{64, 128}, {1, 128}},       // trailing-dimension broadcast (bias-like)
      {{64, 127}, {64, 1}},        // leading: one value per row
      {{4, 5, 6}, {4, 1, 6}},      // middle
      {{4, 1, 3}, {1, 5, 1}},      // both-sided
      {{1}, {1}},                  // one element
      {{1, 1}, {3, 17}},           // the first operand broadcast
  };
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  // Every unary op on every target: an awkward prime length (fallback) and a 2-D shape
  // (a random config); arm-fp16 and arm-bf16 (slow under qemu, same f32 code as arm-neon)
  // get one of the two.
  for (size_t i = 0; i < schedules::elementwise_unary_ops().size(); ++i) {
    const std::string& op = schedules::elementwise_unary_ops()[i];
    for (size_t t = 0; t < kTargets.size(); ++t) {
      bool one = kTargets[t] == "arm-fp16" || kTargets[t] == "arm-bf16";
      if (!one || (i + t) % 2 == 0) out.push_back({ew(op, {{1009}}), kTargets[t], -1});
      if (!one || (i + t) % 2 == 1) out.push_back({ew(op, {{3, 37}}), kTargets[t], int(t)});
    }
  }
  // Every binary op x every broadcast pattern natively (fallback + one random config);
  // on the other targets each op meets two patterns, rotating through the list.
  auto bc = broadcasts();
  for (size_t i = 0; i < schedules::elementwise_binary_ops().size(); ++i) {
    const std::string& op = schedules::elementwise_binary_ops()[i];
    for (size_t p = 0; p < bc.size(); ++p) {
      out.push_back({ew(op, bc[p]), "x86-avx512", -1});
      out.push_back({ew(op, bc[p]), "x86-avx512", int(p)});
    }
    for (size_t t = 0; t < kTargets.size(); ++t) {
      if (kTargets[t] == "x86-avx512") continue;
      out.push_back({ew(op, bc[(i + t) % bc.size()]), kTargets[t], -1});
      if (kTargets[t] == "x86-avx2" || kTargets[t] == "arm-neon")
        out.push_back({ew(op, bc[(i + t + 3) % bc.size()]), kTargets[t], int(t + i)});
    }
  }
  // Half precision where the target has it: every op once.
  std::vector<std::pair<std::string, DataType>> halves = {{"x86-avx512", DataType::f16()},
                                                          {"x86-avx512", DataType::bf16()},
                                                          {"arm-fp16", DataType::f16()},
                                                          {"arm-bf16", DataType::f16()},
                                                          {"arm-bf16", DataType::bf16()}};
  for (size_t h = 0; h < halves.size(); ++h) {
    const auto& [t, d] = halves[h];
    for (const std::string& op : schedules::elementwise_unary_ops())
      out.push_back({ew(op, {{5, 41}}, d), t, int(h) - 1});
    for (const std::string& op : schedules::elementwise_binary_ops())
      out.push_back({ew(op, {{6, 40}, {1, 40}}, d), t, int(h) - 1});
  }
  // Fused chains: one kernel, extra operands with their own broadcasts.
  std::vector<Workload> chains = {
      ew("elementwise_chain", {{16, 100}, {1, 100}, {1, 1}}, DataType::f32(),
         {"add", "relu", "mul"}),
      ew("elementwise_chain", {{2, 3, 37}, {2, 3, 37}, {1, 3, 1}}, DataType::f32(),
         {"mul", "gelu", "sub"}),
      ew("elementwise_chain", {{9, 33}, {9, 1}}, DataType::f32(), {"sigmoid", "max", "tanh", "exp"}),
      ew("elementwise_chain", {{50}, {50}}, DataType::f32(), {"abs", "add", "log", "sqrt"}),
      ew("add", {{8, 64}, {1, 64}}, DataType::f32(), {"relu"}),  // an op with fused steps
  };
  for (size_t i = 0; i < chains.size(); ++i)
    for (size_t t = 0; t < kTargets.size(); ++t) {
      out.push_back({chains[i], kTargets[t], -1});
      if (kTargets[t].rfind("x86", 0) == 0 || (i + t) % 2 == 0)
        out.push_back({chains[i], kTargets[t], int(i + t)});
    }
  out.push_back({ew("elementwise_chain", {{16, 100}, {1, 100}, {1, 1}}, DataType::bf16(),
                    {"add", "clip", "mul"}),
                 "arm-bf16", -1});
  // Sizes where the parallel path and every threshold matter, natively.
  for (int c = 0; c < 6; ++c) {
    out.push_back({ew("add", {{256, 1024}, {1, 1024}}), "x86-avx512", c});
    out.push_back({ew("gelu", {{100003}}), "x86-avx2", c});
    out.push_back({ew("mul", {{3, 70001}, {3, 1}}), "x86-avx512", c});
  }
  Workload clip = ew("clip", {{300}});
  clip.params["lo"] = -0.2501, clip.params["hi"] = 0.5;
  out.push_back({clip, "x86-avx512", -1});
  out.push_back({clip, "arm-neon", -1});
  // Activations with coefficients other than ONNX's defaults (MobileNetV3's hard sigmoid is
  // x / 6 + 0.5; a negative slope for leaky_relu is legal).
  Workload leaky = ew("leaky_relu", {{300}});
  leaky.params["alpha"] = -0.3;
  Workload hard = ew("hard_sigmoid", {{300}});
  hard.params["alpha"] = 1.0 / 6, hard.params["beta"] = 0.5;
  for (const Workload& w : {leaky, hard}) {
    out.push_back({w, "x86-avx512", -1});
    out.push_back({w, "arm-neon", -1});
  }
  return out;
}

class ElementwiseTemplateTest : public TemplateTest {};

TEST_P(ElementwiseTemplateTest, MatchesReference) {
  const TemplateCase& c = GetParam();
  std::string skip = check_in_domain(c.w, c.target, c.config);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

// The shared path (random inputs in [-1, 1], the tuner's check) for ops defined there.
TEST(ElementwiseTemplate, SharedCheckPath) {
  for (const std::string op : {"relu", "gelu", "tanh", "add", "max"}) {
    Workload w = op == std::string("add") || op == std::string("max")
                     ? ew(op, {{4, 1, 3}, {1, 5, 1}})
                     : ew(op, {{257}});
    for (int c = -1; c < 1; ++c) {
      std::string skip = check_template(schedules::elementwise_flat_template(op), w, "host", c);
      if (!skip.empty()) GTEST_SKIP() << skip;
    }
  }
}

// Pow of negative bases by integer exponents (LayerNorm's squared deviation, GPT-2's cube):
// the sign follows the exponent's parity, as std::pow's; y = 0 gives 1.
TEST(ElementwiseTemplate, PowOfNegativeBasesByIntegerExponents) {
  const std::vector<float> exponents = {0, 1, 2, 3, -1, -2, 4, 5, -3};
  Workload w = ew("pow", {{4, 9}, {1, 9}});
  InputCheck check{11, nullptr, w.dtype, tolerance(w.dtype)};
  check.adjust = [&](const schedules::KernelArg& arg, schedules::Values& v) {
    if (arg.logical.name == "b") {
      for (size_t i = 0; i < v.size(); ++i) v[i] = exponents[i % exponents.size()];
    } else {
      for (float& x : v) x = 2 * x;  // [-2, 2]
    }
  };
  for (const std::string target : {"x86-avx2", "arm-neon"}) {
    const schedules::OpTemplate& tpl = schedules::elementwise_flat_template("pow");
    std::string skip =
        check_template_inputs(tpl, w, target, tpl.fallback(w, target_from_name(target)), check);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

// The math activations as fused epilogues of another operator (schedules/epilogue.cpp).
TEST(ElementwiseTemplate, MathEpiloguesOnDense) {
  for (const auto& [epi, target] : std::vector<std::pair<std::string, std::string>>{
           {"gelu", "x86-avx512"}, {"sigmoid", "x86-avx2"}, {"tanh", "arm-neon"}}) {
    Workload w{"dense", {{"M", 5}, {"N", 37}, {"K", 19}}, DataType::f32(), {"bias", epi}};
    std::string skip = check_template(schedules::dense_packed_template(), w, target, -1);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(ElementwiseTemplate, RegistryFindsEveryOp) {
  Target x86 = target_from_name("x86-avx512");
  for (const std::string& op : schedules::elementwise_ops()) {
    Workload w = ew(op, {{8}, {8}}, DataType::f32(),
                    op == "elementwise_chain" ? std::vector<std::string>{"add"}
                                              : std::vector<std::string>{});
    auto tpls = schedules::templates_for(w, x86);
    ASSERT_FALSE(tpls.empty());
    EXPECT_EQ(tpls.front()->name(), "elementwise.flat." + op);
    EXPECT_EQ(&schedules::template_named("elementwise.flat." + op), tpls.front());
  }
}

// Same-shape and trailing broadcasts must not index with div/mod per element.
TEST(ElementwiseTemplate, FastPathsHaveNoIndexDivision) {
  Target x86 = target_from_name("x86-avx512");
  for (const Workload& w : {ew("add", {{64, 128}, {64, 128}}), ew("add", {{64, 128}, {1, 128}}),
                            ew("mul", {{64, 128}, {1, 1}}), ew("add", {{4, 1, 3}, {1, 5, 1}})}) {
    const auto& tpl = schedules::elementwise_flat_template(w.op);
    auto k = tuner::lower_template(tpl, w, x86, tpl.fallback(w, x86), "k");
    std::ostringstream os;
    os << k.func.body;
    EXPECT_EQ(os.str().find(" / "), std::string::npos) << w.str() << "\n" << os.str();
    EXPECT_EQ(os.str().find(" % "), std::string::npos) << w.str() << "\n" << os.str();
    // An inner extent of 3 ([4, 5, 3]) is too short for a vector; the others must be.
    if (w.params.at("rank") == 2)
      EXPECT_NE(os.str().find("ramp("), std::string::npos) << w.str() << " is not vectorized";
  }
}

TEST(ElementwiseTemplate, BadWorkloads) {
  Target x86 = target_from_name("x86-avx512");
  const auto& add = schedules::elementwise_flat_template("add");
  schedules::Config cfg = add.fallback(ew("add", {{4}, {4}}), x86);
  auto instantiate = [&](const Workload& w) {
    return schedules::elementwise_flat_template(w.op).instantiate(w, x86, cfg);
  };
  EXPECT_THROW(instantiate(ew("add", {{4, 3}, {4, 2}})), UserError);  // not broadcastable
  EXPECT_THROW(instantiate(ew("add", {{4, 0}, {4, 1}})), UserError);  // zero dim
  EXPECT_THROW(instantiate(ew("add", {{-4}, {1}})), UserError);       // negative
  EXPECT_THROW(instantiate(ew("relu", {{4}}, DataType::i8())), UserError);
  Workload missing{"add", {{"rank", 1}, {"a0", 4}}, DataType::f32(), {}};
  EXPECT_THROW(instantiate(missing), UserError);  // no b0
  EXPECT_THROW(instantiate(ew("elementwise_chain", {{4}}, DataType::f32(), {})), UserError);
  EXPECT_THROW(instantiate(ew("elementwise_chain", {{4}}, DataType::f32(), {"cosh"})), UserError);
  EXPECT_THROW(instantiate(ew("add", {{4}, {4}}, DataType::f32(), {"cosh"})), UserError);
  Workload rank0{"relu", {{"rank", 0}}, DataType::f32(), {}};
  EXPECT_THROW(instantiate(rank0), UserError);
  Workload clip = ew("clip", {{4}});
  clip.params["lo"] = 0.005, clip.params["hi"] = 0.001;
  EXPECT_THROW(instantiate(clip), UserError);
  EXPECT_THROW(schedules::elementwise_flat_template("cosh"), UserError);
  schedules::Config bad = cfg;
  bad.set("vec_unroll", 3);
  EXPECT_THROW(add.instantiate(ew("add", {{4}, {4}}), x86, bad), UserError);
  // A workload for another op is refused by name.
  EXPECT_THROW(add.instantiate(ew("mul", {{4}, {4}}), x86, cfg), UserError);
}

}  // namespace
}  // namespace kiln::testing
