// bf16 kernels on x86 targets without AVX512-BF16: the rounding to bf16 is kiln's integer
// sequence, and values that only travel (a padded load joined in a phi) move as bits, so the
// kernel links with no library call (the backend's own legalisation called __truncsfbf2,
// which a kernel .so cannot link) and matches the reference.
#include <gtest/gtest.h>

#include "schedules/conv2d/templates.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

schedules::Workload padded_conv_bf16() {
  // The shape that failed: stride 2 and pad 1 give a padding stage whose loads LLVM sinks
  // into a bfloat phi.
  return {"conv2d",
          {{"N", 1}, {"C", 7}, {"H", 15}, {"W", 17}, {"O", 35}, {"KH", 3}, {"KW", 3},
           {"stride", 2}, {"pad", 1}},
          ir::DataType::bf16(),
          {}};
}

TEST(Bf16SoftConvert, PaddedConvLinksAndMatchesOnAvx2) {
  const auto& tpl = schedules::conv2d_nchwc_template();
  const schedules::Workload w = padded_conv_bf16();
  std::string skipped = check_template(tpl, w, "x86-avx2", -1);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
}

TEST(Bf16SoftConvert, RandomConfigsLinkAndMatchOnAvx2) {
  const auto& tpl = schedules::conv2d_nchwc_template();
  for (int seed = 0; seed < 3; ++seed) {
    std::string skipped = check_template(tpl, padded_conv_bf16(), "x86-avx2", seed);
    if (!skipped.empty()) GTEST_SKIP() << skipped;
  }
}

}  // namespace
}  // namespace kiln::testing
