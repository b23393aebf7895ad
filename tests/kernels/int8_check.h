// The check the int8 template suites share (dense.int8, conv2d.int8): check_template_inputs
// with requantization scales of about 100 / rms(sum) over the reduction (random ones in
// [-1, 1) would saturate nearly every output), compared exactly, the output read in the
// workload's type (int32 with requantize=0).
#pragma once

#include <functional>
#include <string>

#include "tests/kernels/template_harness.h"

namespace kiln::testing {

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
