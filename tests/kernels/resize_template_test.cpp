// resize.direct: nearest (every rounding mode) and linear, every coordinate transformation,
// up- and down-scaling by scales and by sizes, on every target preset (ARM under qemu), f32
// and half precision; plus the errors of a bad workload.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/data_movement/resize.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

// in: N, C, H, W; out: OH, OW; scales default to out / in.
Workload resize(std::vector<int64_t> in, int64_t oh, int64_t ow, bool linear, int64_t coord,
                int64_t nearest = 0, DataType t = DataType::f32(), double sh = 0, double sw = 0) {
  if (sh == 0) sh = double(oh) / double(in[2]);
  if (sw == 0) sw = double(ow) / double(in[3]);
  return Workload{"resize",
                  {{"N", in[0]},
                   {"C", in[1]},
                   {"H", in[2]},
                   {"W", in[3]},
                   {"OH", oh},
                   {"OW", ow},
                   {"linear", linear ? 1 : 0},
                   {"coord", coord},
                   {"nearest_mode", nearest},
                   {"scale_h", sh},
                   {"scale_w", sw}},
                  t,
                  {}};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  std::vector<Workload> shapes;
  for (int64_t coord = 0; coord < 5; ++coord) {
    shapes.push_back(resize({1, 3, 5, 7}, 10, 14, false, coord, coord % 4));  // 2x nearest
    shapes.push_back(resize({2, 2, 6, 9}, 4, 5, true, coord));                // linear down
  }
  shapes.push_back(resize({1, 2, 4, 4}, 8, 8, true, 0));   // the FPN / U-Net 2x linear
  shapes.push_back(resize({1, 4, 3, 5}, 7, 11, true, 2));  // align_corners, odd sizes
  shapes.push_back(resize({1, 1, 8, 8}, 3, 3, false, 3, 2, DataType::f32(), 0.4, 0.4));  // scales
  add_small_shape_cases(out, shapes);
  for (const auto& [t, d] : half_targets())
    out.push_back({resize({1, 3, 4, 6}, 8, 12, true, 0, 0, d), t, -1});
  add_native_cases(out, {resize({1, 64, 40, 40}, 80, 80, false, 3, 2),
                         resize({1, 32, 32, 32}, 64, 64, true, 0)});
  return out;
}

class ResizeTemplateTest : public TemplateTest {};

TEST_P(ResizeTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Resize, ResizeTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(ResizeTemplateErrors, BadWorkloads) {
  Target x86 = target_from_name("x86-avx512");
  const schedules::OpTemplate& t = schedules::resize_template();
  auto instantiate = [&](const Workload& w) { return t.instantiate(w, x86, t.fallback(w, x86)); };
  EXPECT_THROW(instantiate(resize({1, 1, 4, 4}, 8, 8, false, 5)), UserError);     // coord
  EXPECT_THROW(instantiate(resize({1, 1, 4, 4}, 8, 8, false, 0, 4)), UserError);  // rounding
  EXPECT_THROW(instantiate(resize({1, 1, 4, 4}, 0, 8, false, 0)), UserError);     // empty
  Workload missing = resize({1, 1, 4, 4}, 8, 8, true, 0);
  missing.params.erase("OH");
  EXPECT_THROW(t.inputs(missing), UserError);
}

}  // namespace
}  // namespace kiln::testing
