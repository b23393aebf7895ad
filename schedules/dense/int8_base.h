// What the integer dense templates share (dense.int8 and dense.int8.dot, int8.h): the
// workload's logical interface (A [M, K] u8 or i8, B [K, N] int8, bias and scale per column,
// C [M, N]), its exact integer reference and its checks. They differ only in how the kernel
// multiplies.
#pragma once

#include "compiler/te/schedule.h"
#include "schedules/op_template.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

class DenseInt8Base : public OpTemplate {
 public:
  std::string op() const override { return "dense"; }
  std::vector<ir::DataType> dtypes() const override {
    return {ir::DataType::u8(), ir::DataType::i8()};
  }
  std::vector<std::string> epilogues() const override { return {"bias"}; }
  std::vector<std::string> value_params() const override { return requantize_value_params(); }

  std::vector<TensorSpec> inputs(const Workload& w) const override;
  TensorSpec output(const Workload& w) const override;
  // The register tile's knobs (the same for both): rows, vectors of columns, K groups per
  // iteration, loop order, threads.
  ConfigSpace space(const Workload& w, const Target& t) const override;

  // Exact: the sums are integers (held exactly in double), the requantization is computed
  // in f32 as the kernel and ONNX Runtime compute it.
  Values reference(const Workload& w, const std::vector<Values>& in) const override;

 protected:
  static bool is_int8_dense(const Workload& w);
  void check(const Workload& w, const Target& t) const override;
  // The fallback for a tile of vectors of `lanes`: accumulators and B vectors within the
  // register file (AVX-512 6 rows x 4 zmm of 32; AVX2 and AVX-VNNI 4 x 2 ymm of 16; NEON
  // 4 x 4 q of 32).
  static Config tile_fallback(const Workload& w, int64_t lanes);

  // A kernel's stages: the arguments (bias and scale unset when absent), A's copy in the
  // instruction's type, the accumulation over reduce = {groups, values in a group} and the
  // requantized output.
  struct Stages {
    te::Tensor a, b, bias, scale, a_copy, acc, c;
    std::vector<ir::IterVar> reduce;
  };
  // The schedule the templates share: A's copy vectorized by `copy_lanes`, the register tile
  // of `lanes` from the config, its group loop replaced by `tile`; the arguments logical but
  // for B, whose packing the caller sets.
  ScheduledKernel schedule_stages(const Workload& w, const Config& cfg, const Stages& st,
                                  int64_t lanes, int64_t copy_lanes, te::TensorIntrin tile) const;
};

}  // namespace kiln::schedules
