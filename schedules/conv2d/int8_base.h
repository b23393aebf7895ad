// What the integer conv2d templates share (conv2d.int8, conv2d.int8.dot and
// conv2d.int8.depthwise, int8.h): the workload's logical interface (data NCHW u8 or i8, weight
// [O, C/groups, KH, KW] int8, bias and scale per output channel, output NCHW), its exact
// integer reference and its checks. They differ only in how the kernel multiplies.
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
  // Whether the workload is an integer conv (u8 or i8 data); of groups 1; depthwise (groups
  // == C == O). The targets are the subclass's.
  static bool is_int8(const Workload& w);
  static bool is_int8_conv(const Workload& w);
  static bool is_int8_depthwise(const Workload& w);
  // True for the depthwise template; the others take groups 1 (check() says which).
  virtual bool depthwise() const { return false; }
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
  // The blocked data [N, CB, H, W, bn] as the tile reads it: padded, each value v as
  // type(v + offset), the padding `pad` (the zero point moved likewise: 0 where the offset
  // subtracts it).
  static te::Tensor moved_data(const Conv2dParams& p, const te::Tensor& data, ir::DataType type,
                               int64_t offset, int64_t pad, const std::string& name);

  // The kernel's tensors; bias and scale unset where the workload has none.
  struct Tensors {
    te::Tensor data, weight, bias, scale, out;
  };
  // The kernel of blocked integer conv `sch`: its arguments logical outside
  // (blocked_conv_args: data NCHW[icb]c, out NCHW[ocb]c), the int8 weights packed by `pack`
  // into `weight_elements` of the kernel's type, bias and scale padded to whole output blocks.
  ScheduledKernel finish(const Workload& w, te::Schedule sch, const Tensors& t, int64_t icb,
                         int64_t ocb, std::function<Values(const Values&)> pack,
                         int64_t weight_elements) const;
};

}  // namespace kiln::schedules
