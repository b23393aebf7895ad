// The mapping functions behind op_table.cpp's table, one file per operator family
// (map_linear, map_elementwise, map_normalization, map_data_movement), and the helpers they
// share: reading a node's shapes and attributes, and refusing it with a message that names
// it. Internal to the network compiler; op_table.h is the interface.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "network/op_table.h"

namespace kiln::network::mapping {

using graph::Graph;
using graph::HostTensor;
using graph::Node;
using schedules::Workload;

// Raised for a node kiln cannot compile: one message naming the node and why (the caller's
// graph is `g`, its node `n`).
#define node_check(cond) user_check(cond) << g.describe(n) << ": "

// The concrete shape of a value (UserError when it has none).
std::vector<int64_t> dims_of(const Graph& g, const std::string& value);

int64_t numel(const std::vector<int64_t>& d);

// An attribute of two per-axis values (strides, dilations) that the 2-D kernels take as H, W.
std::pair<int64_t, int64_t> hw_attr(const Graph& g, const Node& n, const std::string& key,
                                    int64_t fallback);

// Symmetric 2-D padding from ONNX pads [top, left, bottom, right].
std::pair<int64_t, int64_t> hw_pads(const Graph& g, const Node& n);

// N, C, H, W of a workload from an NCHW shape.
void set_nchw(Workload& w, const std::vector<int64_t>& x);

// The shape of input 0, which must be NCHW (rank 4).
std::vector<int64_t> rank4_input(const Graph& g, const Node& n);

// The fused epilogue steps of a Conv / Gemm / MatMul, after an optional bias.
void add_epilogue(const Node& n, MappedNode& m);

// The node's epsilon attribute (default ONNX's 1e-5), checked to be in (0, 1]: the
// normalisation kernels' "eps", exactly as the model states it (BERT's 1e-12 among them).
double epsilon(const Graph& g, const Node& n);

// `axis` in [0, rank) (a negative one counts from the end); UserError when out of range.
int64_t normalized_axis(const Graph& g, const Node& n, int64_t axis, int64_t rank);

// Input `input` as integers; UserError saying `what` must be a constant when it is computed.
std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t input, const char* what);

// map_linear.cpp
// The conv2d workload of a 2-D convolution node (Conv, QLinearConv) over input 0 with
// `weight` (OIHW): shape, strides, dilations, pads, groups; operands data and weight.
MappedNode conv_node(Graph& g, const Node& n, const std::string& weight);
// Conv (2-D, grouped and depthwise included).
MappedNode map_conv(Graph& g, const Node& n);
// ConvTranspose (2-D): the begin pads from `pads`, or from output_shape as ONNX derives them.
MappedNode map_conv_transpose(Graph& g, const Node& n);
// Gemm (and 2-D MatMul): dense with B transposed / scaled at compile time when needed.
MappedNode map_dense(Graph& g, const Node& n);
// MatMul with numpy semantics. A constant 2-D B is a dense layer (A's leading dimensions are
// rows: the same row-major memory), with a bias when fuse_matmul_bias gave it a third input;
// a computed B (attention's Q.K^T and P.V) is a batched matmul over the leading dimensions,
// which both operands must share.
MappedNode map_matmul(Graph& g, const Node& n);
// Attention (fuse_attention.h): Q [.., M, D], Kt [.., D, N], V [.., N, E] [, a mask added
// to the scores] as an attention workload over the flattened batch dimensions.
MappedNode map_attention(Graph& g, const Node& n);

// map_elementwise.cpp
// Elementwise ops: "a", "b" (and where's "c") padded to the output's rank with leading 1s.
MappedNode map_elementwise(const Graph& g, const Node& n, const std::string& op);
MappedNode map_clip(Graph& g, const Node& n);
// Expand: a copy broadcast to the output's shape (the shape input folded to a constant).
MappedNode map_expand(Graph& g, const Node& n);
// Cast between the types the network holds in f32: a copy, nonzero (to bool) or trunc.
MappedNode map_cast(Graph& g, const Node& n);
// Max / Min of two inputs (split_variadic splits longer lists); of one input, a copy.
MappedNode map_min_max(Graph& g, const Node& n, const std::string& op);
MappedNode map_leaky_relu(Graph& g, const Node& n);
MappedNode map_hard_sigmoid(Graph& g, const Node& n);
// Elu, Celu, ThresholdedRelu (alpha) and Selu (alpha, gamma) as the kernels' `op`.
MappedNode map_coefficient_activation(Graph& g, const Node& n, const std::string& op);

// map_normalization.cpp
MappedNode map_pool(Graph& g, const Node& n);
MappedNode map_global_avg_pool(Graph& g, const Node& n);
MappedNode map_batch_norm(Graph& g, const Node& n);
MappedNode map_scale_shift(Graph& g, const Node& n);
// Softmax over the last axis as [M, N] rows.
MappedNode map_softmax(Graph& g, const Node& n);
// LayerNormalization over the axes from `axis` on, as [rows, columns].
MappedNode map_layer_norm(Graph& g, const Node& n);
// ReduceSum / ReduceMean / ReduceMax / ReduceMin over axes that are neighbours once extent-1
// axes are ignored, as [outer, reduced, inner]; GlobalMaxPool is a max over H, W.
MappedNode map_reduce(Graph& g, const Node& n, const std::string& op);
// ArgMax / ArgMin ("arg_max" / "arg_min") and CumSum along one axis, as [outer, axis, inner].
MappedNode map_arg_reduce(Graph& g, const Node& n, const std::string& op);
MappedNode map_cumsum(Graph& g, const Node& n);

// map_quantized.cpp
// QuantizeLinear / DequantizeLinear of an activation with one constant scale and zero point
// (quantize.flat, dequantize.flat).
MappedNode map_quantize(Graph& g, const Node& n);
MappedNode map_dequantize(Graph& g, const Node& n);
// QLinearConv (groups 1) and QLinearMatMul (a constant 2-D B) on the int8 kernels
// (conv2d.int8, dense.int8): constant scales and zero points, int8 weights with zero point 0,
// output of the data's type; the requantization scale per output channel, f32(x_scale) *
// f32(w_scale) / f32(y_scale), becomes a constant operand "scale".
MappedNode map_qlinear_conv(Graph& g, const Node& n);
MappedNode map_qlinear_matmul(Graph& g, const Node& n);
// ONNX Runtime's QGemm with an 8-bit output on the int8 dense kernel (B transposed to [K, N]
// where transB, C as the int32 bias).
MappedNode map_qgemm(Graph& g, const Node& n);
// QLinearAdd of two same-shape 8-bit operands (qlinear_add.flat).
MappedNode map_qlinear_add(Graph& g, const Node& n);

// map_data_movement.cpp
// Flatten, Reshape, Squeeze, Unsqueeze: a copy into the new shape.
MappedNode map_reshape(Graph& g, const Node& n);
MappedNode map_concat(Graph& g, const Node& n);
// fuse_channel_shuffle's ChannelShuffle: "channel_shuffle" over NCHW inputs (the network
// compiler moves it onto blocks where its inputs are blocked: lower_network.cpp).
MappedNode map_channel_shuffle(Graph& g, const Node& n);
// Slice with non-zero steps, negative ones included (a flip); the window's extents are the
// inferred output's.
MappedNode map_slice(Graph& g, const Node& n);
// Gather: of constant indices that step evenly along the axis (one index, a range, every
// other row), a slice; of any other indices (an embedding lookup), the gather kernel.
MappedNode map_gather(Graph& g, const Node& n);
// Pad with a constant (mode "constant", no negative pads).
MappedNode map_pad(Graph& g, const Node& n);
// Resize / Upsample of H and W of an NCHW tensor, nearest or linear.
MappedNode map_resize(Graph& g, const Node& n);
// Transpose after dropping dimensions of extent 1 and merging input dimensions that stay
// neighbours in the same order (attention's rank-5 head shuffles become rank 3 or 4).
MappedNode map_transpose(Graph& g, const Node& n);

}  // namespace kiln::network::mapping
