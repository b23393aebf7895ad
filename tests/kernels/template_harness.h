// Checks an operator template end to end: build a config of its space for a workload and a
// target, pack random logical inputs into the kernel's layout, run the kernel (natively or
// under qemu), unpack its output and compare with the template's reference.
//
// The *_template_test.cpp files share the parameterized-test scaffolding below: a case is
// (workload, target, config seed, template), each suite derives its own fixture from
// TemplateTest (so its test names and gtest filters stay its own) and instantiates it with
// template_case_name.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "schedules/op_template.h"

namespace kiln::testing {

// config_seed < 0: the template's fallback config; otherwise a random config of its space.
schedules::Config template_config(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const Target& target, int config_seed);

// Returns a skip reason (empty when it ran); failures are gtest failures.
std::string check_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const std::string& target, int config_seed);

// check_template with an explicit config.
std::string check_template_config(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const std::string& target, const schedules::Config& cfg);

// The fallback with one of `knobs` set to another of its choices, for every such choice of
// each: every value of a knob is lowered, built and checked at least once.
std::vector<schedules::Config> knob_sweep(const schedules::OpTemplate& tpl,
                                         const schedules::Workload& w, const Target& target,
                                         const std::vector<std::string>& knobs);

// For tests that draw their own inputs (an op's domain, a non-negative variance, an f32
// output of half inputs): check_template's steps with logical input i drawn as
// random_values(elements, first_seed + i, w.dtype), then passed through `adjust`, packed
// (the packed size checked), run; the output, read as `out_dtype`, is compared with the
// reference rounded to `out_dtype` within `rtol`. Returns a skip reason.
struct InputCheck {
  uint32_t first_seed = 11;
  std::function<void(const schedules::KernelArg&, schedules::Values&)> adjust;  // may be unset
  ir::DataType out_dtype;
  double rtol = 0;
};
std::string check_template_inputs(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const std::string& target, const schedules::Config& cfg,
                                  const InputCheck& check);

// Runs `tpl`'s kernel for `cfg` on the given logical inputs (packed as its arguments ask) and
// returns the logical output (unpacked), read as `out_dtype`; empty, with `skip_reason` set, where the target
// cannot run here.
schedules::Values run_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const std::string& target, const schedules::Config& cfg,
                               const std::vector<schedules::Values>& logical,
                               ir::DataType out_dtype, std::string* skip_reason);

struct TemplateCase {
  schedules::Workload w;
  std::string target;
  int config;                                  // -1: fallback; otherwise a random config
  const schedules::OpTemplate* tpl = nullptr;  // null: the registry's default for w on target
};

void PrintTo(const TemplateCase& c, std::ostream* os);

// "<template or op>_<dtype>_<target>_<fallback|cfgN>_<index>", non-alphanumerics as '_'.
std::string template_case_name(const ::testing::TestParamInfo<TemplateCase>& info);
// `name` with every non-alphanumeric character replaced by '_', then "_<index>".
std::string test_name(std::string name, size_t index);

// The template a case runs: its own, or the registry's first for the workload and target.
const schedules::OpTemplate& case_template(const TemplateCase& c);

class TemplateTest : public ::testing::TestWithParam<TemplateCase> {
 protected:
  // Asserts the case's template applies, runs check_template, skips with its reason.
  void check();
};

// The matrix most suites run on small, awkward shapes: the fallback and two random configs
// on AVX-512, the fallback on AVX2; under qemu a random config on NEON and the fallback on
// arm-bf16 (even positions) or arm-fp16 (odd ones), which are slow under qemu.
void add_small_shape_cases(std::vector<TemplateCase>& out,
                           const std::vector<schedules::Workload>& shapes);
// The half-precision targets and dtypes the suites run: bf16 and f16 on AVX-512, f16 on
// arm-fp16, bf16 on arm-bf16.
const std::vector<std::pair<std::string, ir::DataType>>& half_targets();
// The fallback and config 0 of each workload on AVX-512 (real layer shapes, natively).
void add_native_cases(std::vector<TemplateCase>& out, const std::vector<schedules::Workload>& w);

}  // namespace kiln::testing
