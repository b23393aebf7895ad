// Batch normalisation for inference over NCHW:
//   Y[n, c, h, w] = (X - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c].
//
// Workload "batch_norm": N, C, H, W, eps (a real; default 1e-5 as in
// PyTorch/ONNX). Inputs X, gamma, beta, mean, var (the ONNX order); dtypes f32,
// f16, bf16, computed in f32. In a network the graph compiler folds batch_norm into the
// preceding conv's weights; this kernel is for the cases it cannot fold.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "batch_norm.nchw": per channel a scale and a shift (one sqrt per channel, not per
// element), then one fused multiply-add pass per plane, vectorized along H*W, (N*C)
// planes parallel.
const OpTemplate& batch_norm_template();

}  // namespace kiln::schedules
