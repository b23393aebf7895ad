// cast.flat (schedules/elementwise/cast.h): f32 to bf16/f16 and back, on every target preset
// that runs here (ARM under qemu), fallback and both configs, sizes with and without a vector
// tail; checked against the reference rounded to the output type (round to nearest even), and
// its bad to_f32 value refused.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/elementwise/cast.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;

TEST(CastTemplate, BothDirectionsOnEveryPreset) {
  const auto& tpl = schedules::cast_template();
  for (const std::string target : {"x86-avx2", "x86-avx512", "arm-fp16", "arm-bf16"}) {
    // Each ARM case is a qemu process: one size with a tail and the fallback there.
    const bool arm = target.rfind("arm", 0) == 0;
    const std::vector<int64_t> sizes = arm ? std::vector<int64_t>{1001} : std::vector<int64_t>{7, 1000, 70001};
    for (DataType half : {DataType::bf16(), DataType::f16()})
      for (bool to_f32 : {false, true})
        for (int64_t n : sizes) {
          SCOPED_TRACE(target + " " + half.str() + (to_f32 ? " to f32 " : " from f32 ") +
                       std::to_string(n));
          const schedules::Workload w = schedules::cast_workload(n, half, to_f32);
          // The fallback, and (natively) the other value of the one knob.
          for (int seed : arm ? std::vector<int>{-1} : std::vector<int>{-1, 0}) {
            std::string skipped = check_template(tpl, w, target, seed);
            if (!skipped.empty()) GTEST_SKIP() << skipped;
          }
        }
  }
}

TEST(CastTemplate, RefusesF32AndABadDirection) {
  const auto& tpl = schedules::cast_template();
  const Target t = target_from_name("x86-avx512");
  EXPECT_FALSE(tpl.applies(schedules::Workload{"cast", {{"elements", 4}, {"to_f32", 0}},
                                               DataType::f32(), {}},
                           t));
  schedules::Workload bad = schedules::cast_workload(4, DataType::bf16(), false);
  bad.params["to_f32"] = 2;
  EXPECT_THROW(tpl.space(bad, t), UserError);
}

}  // namespace
}  // namespace kiln::testing
