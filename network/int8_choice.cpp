#include "network/int8_choice.h"

#include "network/op_mapping.h"
#include "schedules/conv2d/winograd.h"
#include "schedules/intrinsics.h"

namespace kiln::network {

bool has_fast_int8(const Target& t) {
  return schedules::quad_dot_lanes(t) > 0;
}

std::string int8_conv_keeps_float(graph::Graph& g, const graph::Node& conv, const Target& t) {
  if (t.name.empty() || conv.op_type != "Conv") return "";
  // A QLinearConv's own weights (the Conv it stands for reads them as they are).
  if (const auto w = g.type_of(conv.inputs.at(1)); w && w->dtype == ir::DataType::u8())
    return "uint8 weights: kiln's int8 kernels take int8 weights (symmetric quantization)";
  if (has_fast_int8(t)) return "";
  schedules::Workload w = mapping::conv_node(g, conv, conv.inputs.at(1)).workload;
  w.dtype = ir::DataType::f32();
  if (schedules::winograd_preferred(w, t))
    return "int8 slower here: f32 runs this 3x3 conv by Winograd, with fewer multiplies";
  if (w.param("C") < 4)
    return "int8 slower here: " + std::to_string(w.param("C")) +
           " input channels, padded to pairs by the int8 kernel";
  return "";
}

}  // namespace kiln::network
