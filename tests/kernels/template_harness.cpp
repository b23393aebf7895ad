#include "tests/kernels/template_harness.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>

#include "compiler/ir/printer.h"
#include "compiler/target/target.h"
#include "schedules/registry.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/native_targets.h"
#include "tuner/builder.h"

namespace kiln::testing {

namespace {

// With KILN_IR_SWEEP_DIR set, a case writes its lowered IR to a file of that folder (named by
// a hash of template, workload, target and config) and runs nothing: `diff -r` of two sweeps
// shows whether a refactor changed any kernel (`KILN_IR_SWEEP_DIR=d ctest -L kernels`).
// Returns true when the sweep took the case.
bool sweep_ir(const std::string& what, const ir::LoweredFunc& f) {
  const char* dir = std::getenv("KILN_IR_SWEEP_DIR");
  if (!dir || !*dir) return false;
  std::ofstream(std::string(dir) + "/" + std::to_string(std::hash<std::string>{}(what)) + ".tir")
      << what << '\n'
      << f.body << '\n';
  return true;
}

}  // namespace

schedules::Config template_config(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const Target& target, int config_seed) {
  if (config_seed < 0) return tpl.fallback(w, target);
  std::mt19937_64 rng(static_cast<uint64_t>(config_seed) * 7919 + 17);
  return tpl.space(w, target).random(rng);
}

std::string check_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const std::string& target_name, int config_seed) {
  return check_template_config(
      tpl, w, target_name, template_config(tpl, w, target_from_name(target_name), config_seed));
}

std::string check_template_config(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const std::string& target_name, const schedules::Config& cfg) {
  Target target = target_from_name(target_name);
  SCOPED_TRACE(tpl.name() + " " + w.str() + " on " + target_name + " config " + cfg.to_json());
  tuner::BuiltKernel k = tuner::lower_template(tpl, w, target, cfg, "kernel");
  if (sweep_ir(tpl.name() + " " + w.str() + " " + target_name + " " + cfg.to_json(), k.func))
    return "IR sweep";
  tuner::CheckResult r = tuner::check_built_kernel(tpl, w, target, k, test_run_options());
  if (!r.skip_reason.empty()) return r.skip_reason;
  EXPECT_TRUE(r.comparison.close) << r.comparison.message();
  return "";
}

namespace {

// Packs the logical inputs into `k`'s arguments, runs it on the target and returns its
// output read as `out_dtype` (empty, with `skip_reason` set, where the target cannot run).
schedules::Values run_built(const tuner::BuiltKernel& k, const schedules::Workload& w,
                            const std::string& target_name,
                            const std::vector<schedules::Values>& logical, ir::DataType out_dtype,
                            std::string* skip_reason) {
  std::vector<Bytes> args;
  size_t next = 0;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const schedules::KernelArg& a = k.args[i];
    if (a.is_output) {
      args.emplace_back(static_cast<size_t>(a.kernel_elements) * out_dtype.bytes(), 0);
      continue;
    }
    const schedules::Values& v = logical.at(next++);
    schedules::Values packed = a.pack ? a.pack(v) : v;
    EXPECT_EQ(static_cast<int64_t>(packed.size()), a.kernel_elements) << a.logical.name;
    args.push_back(encode(packed, k.func.args.at(i)->dtype));  // each in its own type
  }
  TargetRun run = run_on_target(k.func, target_name, args, {static_cast<int>(args.size()) - 1});
  *skip_reason = run.skip_reason;
  if (!run.skip_reason.empty()) return {};
  return decode(run.outputs[0], out_dtype);
}

}  // namespace

schedules::Values run_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const std::string& target_name, const schedules::Config& cfg,
                               const std::vector<schedules::Values>& logical,
                               ir::DataType out_dtype, std::string* skip_reason) {
  tuner::BuiltKernel k = tuner::lower_template(tpl, w, target_from_name(target_name), cfg, "kernel");
  schedules::Values out = run_built(k, w, target_name, logical, out_dtype, skip_reason);
  const schedules::KernelArg& o = k.args.back();
  return o.unpack && !out.empty() ? o.unpack(out) : out;
}

std::string check_template_inputs(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                                  const std::string& target_name, const schedules::Config& cfg,
                                  const InputCheck& check) {
  Target target = target_from_name(target_name);
  SCOPED_TRACE(tpl.name() + " " + w.str() + " on " + target_name + " config " + cfg.to_json());
  tuner::BuiltKernel k = tuner::lower_template(tpl, w, target, cfg, "kernel");
  if (sweep_ir(tpl.name() + " " + w.str() + " " + target_name + " " + cfg.to_json(), k.func))
    return "IR sweep";
  std::vector<schedules::Values> logical;
  uint32_t seed = check.first_seed;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const schedules::KernelArg& a = k.args[i];
    if (a.is_output) continue;
    const ir::DataType t = a.logical_dtype.is_handle() ? k.func.args.at(i)->dtype : a.logical_dtype;
    logical.push_back(random_values(a.logical.elements(), seed++, t));
    if (check.adjust) check.adjust(a, logical.back());
  }
  std::string skip;
  schedules::Values got = run_built(k, w, target_name, logical, check.out_dtype, &skip);
  if (!skip.empty()) return skip;
  if (k.args.back().unpack) got = k.args.back().unpack(got);  // a blocked output to NCHW
  schedules::Values want = tpl.reference(w, logical);
  for (float& x : want) x = round_to(x, check.out_dtype);
  EXPECT_TRUE(all_close(got, want, check.rtol));
  return "";
}

std::vector<schedules::Config> knob_sweep(const schedules::OpTemplate& tpl,
                                         const schedules::Workload& w, const Target& target,
                                         const std::vector<std::string>& knobs) {
  const schedules::Config base = tpl.fallback(w, target);
  const schedules::ConfigSpace space = tpl.space(w, target);
  std::vector<schedules::Config> out;
  for (const schedules::Knob& k : space.knobs()) {
    if (std::find(knobs.begin(), knobs.end(), k.name) == knobs.end()) continue;
    for (int64_t v : k.choices) {
      if (v == base[k.name]) continue;  // the fallback itself runs in the other suites
      schedules::Config c = base;
      c.set(k.name, v);
      out.push_back(c);
    }
  }
  return out;
}

void PrintTo(const TemplateCase& c, std::ostream* os) {
  if (c.tpl) *os << c.tpl->name() << " ";
  *os << c.w.str() << " on " << c.target << " config " << c.config;
}

std::string test_name(std::string name, size_t index) {
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name + "_" + std::to_string(index);
}

std::string template_case_name(const ::testing::TestParamInfo<TemplateCase>& info) {
  const TemplateCase& c = info.param;
  return test_name((c.tpl ? c.tpl->name() : c.w.op) + "_" + c.w.dtype.str() + "_" + c.target + "_" +
                       (c.config < 0 ? "fallback" : "cfg" + std::to_string(c.config)),
                   info.index);
}

const schedules::OpTemplate& case_template(const TemplateCase& c) {
  if (c.tpl) return *c.tpl;
  return *schedules::templates_for(c.w, target_from_name(c.target)).front();
}

void TemplateTest::check() {
  const TemplateCase& c = GetParam();
  const schedules::OpTemplate& tpl = case_template(c);
  ASSERT_TRUE(tpl.applies(c.w, target_from_name(c.target)));
  std::string skip = check_template(tpl, c.w, c.target, c.config);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

void add_small_shape_cases(std::vector<TemplateCase>& out,
                           const std::vector<schedules::Workload>& shapes) {
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int c = -1; c < 2; ++c) out.push_back({shapes[i], "x86-avx512", c});
    out.push_back({shapes[i], "x86-avx2", -1});
    out.push_back({shapes[i], "arm-neon", 2});
    out.push_back({shapes[i], i % 2 ? "arm-fp16" : "arm-bf16", -1});
  }
}

const std::vector<std::pair<std::string, ir::DataType>>& half_targets() {
  static const std::vector<std::pair<std::string, ir::DataType>> k = {
      {"x86-avx512", ir::DataType::bf16()},    // bf16 widened to f32: the preset has no bf16 dots
      {test::kX86Bf16, ir::DataType::bf16()},  // and with them, where this machine runs it
      {"x86-avx512", ir::DataType::f16()},
      {"arm-fp16", ir::DataType::f16()},
      {"arm-bf16", ir::DataType::bf16()}};
  return k;
}

void add_native_cases(std::vector<TemplateCase>& out, const std::vector<schedules::Workload>& ws) {
  for (const schedules::Workload& w : ws)
    for (int c = -1; c < 1; ++c) out.push_back({w, "x86-avx512", c});
}

}  // namespace kiln::testing
