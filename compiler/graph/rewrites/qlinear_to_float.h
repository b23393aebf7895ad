// The inverse of quantized_operators for a QLinearConv (the QOperator form) that the caller's
// KeepFloat keeps in float (its int8 kernel would be slower on the target): the node becomes
// the QDQ form it stands for,
//   QLinearConv(x_q, sx, zx, w_q, sw, zw, sy, zy [, bias_i32])
//     =>  QuantizeLinear(Conv(DQ(x_q, sx, zx), DQ(w_q, sw, zw) [, bias_i32 * sx * sw]), sy, zy)
// so a model quantized in either form takes the same path (the weight's DequantizeLinear is
// then folded into an f32 constant). Only a QLinearConv whose scales and zero points are
// constants is expanded.
#pragma once

#include <set>
#include <string>

#include "compiler/graph/graph.h"
#include "compiler/graph/rewrites/quantized_operators.h"

namespace kiln::graph {

// Expands the QLinearConvs `keep_float` gives a reason for; returns the outputs of the Convs it
// made (which the QDQ fusion must then leave alone).
std::set<std::string> expand_float_qlinear_convs(Graph& g, const KeepFloat& keep_float);

}  // namespace kiln::graph
