// Small ONNX networks for the network compiler's tests, built with the protobuf API, and the
// check that runs a compiled model against the graph's reference evaluator.
#pragma once

#include <string>

#include "runtime/process/temp_dir.h"
#include "tests/graph/model_builder.h"

namespace kiln::network::test {

// Conv(3x3, pad 1) + BatchNormalization + Relu + MaxPool + Flatten + Gemm + Softmax.
std::string conv_bn_relu_pool_gemm_softmax();
// A ResNet basic block: conv-bn-relu, conv-bn, + the block input, relu, global pool.
std::string residual_block();
// MobileNetV2-style: pointwise expand + relu6 (Clip), depthwise 3x3 stride 2 + relu6,
// pointwise project, then AveragePool.
std::string depthwise_pointwise_block();

// Three identical conv3x3(16->16)+bias+relu layers in a row on a 1x16x10x10 input: one
// workload computed three times.
std::string repeated_conv_chain();

// Wide enough for two channel blocks per conv (16 and 32 on AVX-512), for the layout choice:
// conv 3x3 32->32, conv 1x1 32->64, conv 3x3 64->64, each + bias + relu, on 1x32x8x8;
std::string conv_chain_32();
// and conv 3x3 + relu, conv 3x3 + the block input (a residual join) + relu, on 1x32x8x8.
std::string residual_block_32();

// x -> Q -> DQ -> Conv 3x3 8->16 -> Q -> DQ -> Conv 1x1 16->12 -> Q -> DQ on 1x8x10x10: two
// convolutions between quantized activations, as quantize_static writes them (per-channel
// int8 weights, int32 biases; output scale 0.08). The convs are named conv0 and conv1.
std::string qdq_chain_model();

// A fresh temporary directory, removed by the destructor.
using kiln::TempDir;  // runtime/process/temp_dir.h

}  // namespace kiln::network::test
