// What the integer conv2d templates share (conv2d.int8 and conv2d.int8.dot, int8.h): the
// workload's logical interface (data NCHW u8 or i8, weight OIHW int8, bias and scale per
// output channel, output NCHW), its exact integer reference and its checks. They differ only
// in how the kernel multiplies.
#pragma once

#include "compiler/base/error.h"
#include "schedules/conv2d/common.h"
#include "schedules/op_template.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

class Conv2dInt8Base : public OpTemplate {
 public:
  std::string op() const override { return "conv2d"; }
  std::vector<ir::DataType> dtypes() const override {
    return {ir::DataType::u8(), ir::DataType::i8()};
  }
  std::vector<std::string> epilogues() const override { return {"bias"}; }
  std::vector<std::string> value_params() const override { return requantize_value_params(); }

  std::vector<TensorSpec> inputs(const Workload& w) const override;
  TensorSpec output(const Workload& w) const override;
  // Exact: integer sums in double (padding reads a_zero, so adds nothing), then
  // requantize_reference.
  Values reference(const Workload& w, const std::vector<Values>& in) const override;

 protected:
  // Whether the workload is an integer conv of groups 1 (the targets are the subclass's).
  static bool is_int8_conv(const Workload& w);
  void check(const Workload& w, const Target& t) const override;

  // The register tile's space: input blocks `ic_choices`, output blocks of `lanes`
  // accumulators, the tile's width and unrolling, the loop knobs; k_unroll counts the 32-bit
  // channel groups (pairs or quads) per iteration of the group loop.
  static ConfigSpace tile_space(const Conv2dParams& p, std::vector<int64_t> ic_choices,
                                int64_t lanes);
  // The fallback in that space: input block `icb`, `k_unroll` channel groups per iteration,
  // at most `max_vecs` output vectors and `max_acc` accumulators.
  static Config tile_fallback(const Conv2dParams& p, int64_t icb, int64_t k_unroll, int64_t lanes,
                              int64_t max_vecs, int64_t max_acc);
  // The f32 scale argument padded to `channels` (whole output blocks).
  static void pad_scale(std::vector<KernelArg>& args, int64_t channels);
};

}  // namespace kiln::schedules
