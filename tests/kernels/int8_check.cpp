#include "tests/kernels/int8_check.h"

#include <cmath>

namespace kiln::testing {

namespace {

// Products summed per output: K of a dense, C x KH x KW of a conv.
double reduction_length(const schedules::Workload& w) {
  if (w.op == "dense") return static_cast<double>(w.param("K"));
  return static_cast<double>(w.param("C") * w.param("KH") * w.param("KW"));
}

}  // namespace

schedules::Workload int8_conv(const Int8Conv& c) {
  schedules::Workload w{"conv2d",
                        {{"N", 1},
                         {"C", c.c},
                         {"H", c.h},
                         {"W", c.h},
                         {"O", c.o},
                         {"KH", c.k},
                         {"KW", c.k},
                         {"stride", c.stride},
                         {"pad", c.pad},
                         {"dilation", c.dilation}},
                        c.t,
                        {}};
  w.params["a_zero"] = c.a_zero;
  w.params["requantize"] = c.requantize ? 1 : 0;
  if (c.requantize) w.params["y_zero"] = c.y_zero;
  if (c.y_lo >= 0) w.params["y_lo"] = c.y_lo;
  if (c.bias) w.epilogue.push_back("bias");
  return w;
}

std::string check_int8(
    const schedules::OpTemplate& tpl, const schedules::Workload& w, const std::string& target,
    const schedules::Config& cfg,
    std::function<void(const schedules::KernelArg&, schedules::Values&)> adjust) {
  InputCheck ic;
  ic.first_seed = 7;
  const double n = reduction_length(w);
  ic.adjust = adjust ? adjust : [n](const schedules::KernelArg& a, schedules::Values& v) {
    if (a.logical.name != "scale") return;
    for (float& x : v) x = static_cast<float>((0.5 + std::fabs(x)) * 0.02 / std::sqrt(n));
  };
  ic.out_dtype = w.param_or("requantize", 1) ? w.dtype : ir::DataType::i32();
  ic.rtol = 0;  // exact
  return check_template_inputs(tpl, w, target, cfg, ic);
}

void Int8TemplateTest::check_case() {
  const TemplateCase& c = GetParam();
  const schedules::OpTemplate& tpl = case_template(c);
  const Target t = target_from_name(c.target);
  ASSERT_TRUE(tpl.applies(c.w, t));
  const std::string skip = check_int8(tpl, c.w, c.target, template_config(tpl, c.w, t, c.config));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace kiln::testing
