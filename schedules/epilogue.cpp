#include "schedules/epilogue.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/math.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;

const std::vector<std::string>& epilogue_names() {
  static const std::vector<std::string> k = {"bias",    "relu", "relu6", "residual",   "gelu",
                                             "sigmoid", "tanh", "silu",  "hard_swish", "mish"};
  return k;
}

std::vector<TensorSpec> epilogue_inputs(const Workload& w, int64_t channels,
                                        const std::vector<int64_t>& out_shape) {
  std::vector<TensorSpec> in;
  if (w.has_epilogue("bias")) in.push_back({"bias", {channels}});
  if (w.has_epilogue("residual")) in.push_back({"residual", out_shape});
  return in;
}

EpilogueTensors make_epilogue_placeholders(const Workload& w, int64_t channels,
                                           const std::vector<Expr>& out_shape) {
  EpilogueTensors t;
  if (w.has_epilogue("bias")) t.bias = te::placeholder({channels}, w.dtype, "bias");
  if (w.has_epilogue("residual")) t.residual = te::placeholder(out_shape, w.dtype, "residual");
  return t;
}

std::vector<te::Tensor> with_epilogue_args(std::vector<te::Tensor> inputs, const EpilogueTensors& t,
                                           const te::Tensor& out) {
  if (t.bias.defined()) inputs.push_back(t.bias);
  if (t.residual.defined()) inputs.push_back(t.residual);
  inputs.push_back(out);
  return inputs;
}

Expr apply_epilogue(const Workload& w, const EpilogueTensors& t, Expr v,
                    const std::vector<Expr>& idx, const Expr& channel) {
  DataType f32 = DataType::f32();
  for (const std::string& e : w.epilogue) {
    if (e == "bias") {
      v = v + ir::make_cast(f32, t.bias(channel));
    } else if (e == "relu") {
      v = ir::max(v, ir::make_zero(f32));
    } else if (e == "relu6") {
      v = ir::min(ir::max(v, ir::make_zero(f32)), ir::make_float(f32, 6.0));
    } else if (e == "residual") {
      v = v + ir::make_cast(f32, t.residual(idx));
    } else if (e == "gelu") {
      v = math::gelu(v);
    } else if (e == "sigmoid") {
      v = math::sigmoid(v);
    } else if (e == "tanh") {
      v = math::tanh(v);
    } else if (e == "silu") {
      v = v * math::sigmoid(v);
    } else if (e == "hard_swish") {  // ONNX HardSwish: x * max(0, min(1, x / 6 + 1 / 2))
      v = v * ir::min(ir::max(v * ir::make_float(f32, 1.0 / 6) + ir::make_float(f32, 0.5),
                              ir::make_zero(f32)),
                      ir::make_float(f32, 1.0));
    } else if (e == "mish") {
      v = math::mish(v);
    } else {
      user_error() << "unknown epilogue '" << e << "'";
    }
  }
  return v;
}

double apply_epilogue_reference(const Workload& w, const std::vector<const Values*>& inputs,
                                double v, int64_t channel, int64_t flat) {
  size_t next = 0;
  const Values* bias = w.has_epilogue("bias") ? inputs.at(next++) : nullptr;
  const Values* residual = w.has_epilogue("residual") ? inputs.at(next++) : nullptr;
  for (const std::string& e : w.epilogue) {
    if (e == "bias") v += (*bias)[channel];
    else if (e == "relu") v = std::max(v, 0.0);
    else if (e == "relu6") v = std::min(std::max(v, 0.0), 6.0);
    else if (e == "residual") v += (*residual)[flat];
    else if (e == "gelu") v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    else if (e == "sigmoid") v = 1.0 / (1.0 + std::exp(-v));
    else if (e == "tanh") v = std::tanh(v);
    else if (e == "silu") v = v / (1.0 + std::exp(-v));
    else if (e == "hard_swish") v = v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0);
    else if (e == "mish")
      v = elementwise_unary_reference("mish", v, w);
  }
  return v;
}

}  // namespace kiln::schedules
