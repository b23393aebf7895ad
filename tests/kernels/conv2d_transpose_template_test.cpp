// conv2d_transpose.direct: strides 1-3, dilation, pads, output padding, groups and fused
// epilogues, on every target preset (ARM under qemu) and in half precision; bad workloads.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/conv2d/transpose.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

// Output size as ONNX computes it: stride * (in - 1) + (k - 1) * dil + 1 - pads + out_pad.
Workload deconv(int64_t c, int64_t h, int64_t o, int64_t k, int64_t stride, int64_t pad,
                int64_t groups = 1, int64_t dil = 1, int64_t out_pad = 0,
                std::vector<std::string> epilogue = {}, DataType t = DataType::f32()) {
  const int64_t w = h + 1;
  auto size = [&](int64_t in) { return stride * (in - 1) + (k - 1) * dil + 1 - 2 * pad + out_pad; };
  return Workload{"conv2d_transpose",
                  {{"N", 1},
                   {"C", c},
                   {"H", h},
                   {"W", w},
                   {"O", o},
                   {"KH", k},
                   {"KW", k},
                   {"SH", stride},
                   {"SW", stride},
                   {"DH", dil},
                   {"DW", dil},
                   {"PH", pad},
                   {"PW", pad},
                   {"OH", size(h)},
                   {"OW", size(w)},
                   {"groups", groups}},
                  t,
                  std::move(epilogue)};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  add_small_shape_cases(out, {
                                 deconv(4, 5, 3, 2, 2, 0),           // DBNet's 2x2 / 2
                                 deconv(3, 4, 5, 3, 2, 1, 1, 1, 1),  // output padding
                                 deconv(4, 3, 4, 3, 1, 1, 2),        // groups, stride 1
                                 deconv(2, 4, 2, 3, 3, 0, 1, 2),     // dilation
                                 deconv(3, 4, 6, 4, 2, 1, 1, 1, 0, {"bias", "relu"}),
                             });
  for (const auto& [t, d] : half_targets())
    out.push_back({deconv(4, 4, 4, 2, 2, 0, 1, 1, 0, {"bias"}, d), t, -1});
  add_native_cases(out, {deconv(64, 40, 32, 2, 2, 0, 1, 1, 0, {"bias"})});
  return out;
}

class Conv2dTransposeTemplateTest : public TemplateTest {};

TEST_P(Conv2dTransposeTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Conv2dTranspose, Conv2dTransposeTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(Conv2dTransposeTemplateErrors, BadWorkloads) {
  const schedules::OpTemplate& t = schedules::conv2d_transpose_template();
  Workload groups = deconv(4, 3, 3, 3, 1, 1, 2);  // 3 output channels in 2 groups
  EXPECT_THROW(t.inputs(groups), UserError);
  Workload stride = deconv(4, 3, 4, 3, 1, 1);
  stride.params["SH"] = 0;
  EXPECT_THROW(t.inputs(stride), UserError);
}

}  // namespace
}  // namespace kiln::testing
