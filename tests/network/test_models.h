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

// A fresh temporary directory, removed by the destructor.
using kiln::TempDir;  // runtime/process/temp_dir.h

}  // namespace kiln::network::test
