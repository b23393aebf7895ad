// Fused epilogues: what runs on each output element of a dense or conv2d before it is
// stored (bias add, activations, residual add), so the result makes one pass over memory.
// Names: "bias", "relu", "relu6", "residual", and the activations of schedules/math.h
// "gelu", "sigmoid", "tanh", "silu" (x sigmoid(x)), "hard_swish" (ONNX's HardSwish) and "mish" (x
// tanh(softplus(x))). Applied in the order the workload lists them.
#pragma once

#include <string>
#include <vector>

#include "schedules/op_template.h"
#include "compiler/te/tensor.h"

namespace kiln::schedules {

const std::vector<std::string>& epilogue_names();

// The extra kernel inputs an epilogue reads, in call order: "bias" needs a vector over the
// output channel (`channels`), "residual" a tensor shaped like the output.
std::vector<TensorSpec> epilogue_inputs(const Workload& w, int64_t channels,
                                        const std::vector<int64_t>& out_shape);

struct EpilogueTensors {
  te::Tensor bias, residual;
};
// `out_shape` may hold run-time sizes (run_time_dims.h).
EpilogueTensors make_epilogue_placeholders(const Workload& w, int64_t channels,
                                           const std::vector<ir::Expr>& out_shape);
// A kernel's tensors in call order: `inputs`, then the epilogue's (as epilogue_inputs
// orders them), then `out`.
std::vector<te::Tensor> with_epilogue_args(std::vector<te::Tensor> inputs, const EpilogueTensors& t,
                                           const te::Tensor& out);

// value (f32) at output index `idx` whose channel index is `channel` -> epilogue(value).
ir::Expr apply_epilogue(const Workload& w, const EpilogueTensors& t, ir::Expr value,
                        const std::vector<ir::Expr>& idx, const ir::Expr& channel);

// The same in double for the reference: `inputs` holds the epilogue's tensors in the order
// of epilogue_inputs; `channel` and `flat` locate the element.
double apply_epilogue_reference(const Workload& w, const std::vector<const Values*>& inputs,
                                double value, int64_t channel, int64_t flat);

}  // namespace kiln::schedules
