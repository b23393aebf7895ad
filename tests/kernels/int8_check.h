// The check the int8 template suites share (dense.int8, conv2d.int8): check_template_inputs
// with requantization scales of about 100 / rms(sum) over the reduction (random ones in
// [-1, 1) would saturate nearly every output), compared exactly, the output read in the
// workload's type (int32 with requantize=0).
#pragma once

#include <functional>
#include <string>

#include "tests/kernels/template_harness.h"

namespace kiln::testing {

// An integer conv2d workload (N = 1, square), as the int8 suites draw them.
struct Int8Conv {
  int64_t c, h, o, k, stride = 1, pad = 0, dilation = 1;
  ir::DataType t = ir::DataType::u8();
  int64_t a_zero = 0;
  bool bias = true, requantize = true;
  int64_t y_zero = 0, y_lo = -1;  // -1: the type's bound
};
schedules::Workload int8_conv(const Int8Conv& c);

// `adjust`, when set, draws the inputs instead (the extremes of the saturation test).
std::string check_int8(
    const schedules::OpTemplate& tpl, const schedules::Workload& w, const std::string& target,
    const schedules::Config& cfg,
    std::function<void(const schedules::KernelArg&, schedules::Values&)> adjust = {});

// One case of a suite: the template applies, its config, check_int8; a skip with its reason.
class Int8TemplateTest : public TemplateTest {
 protected:
  void check_case();
};

}  // namespace kiln::testing
