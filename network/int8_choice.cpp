#include "network/int8_choice.h"

#include "network/op_mapping.h"
#include "schedules/conv2d/winograd.h"
#include "schedules/intrinsics.h"

namespace kiln::network {

bool has_fast_int8(const Target& t) {
  return schedules::quad_dot_lanes(t) > 0;
}

namespace {

// What no int8 kernel takes, whatever the target.
std::string int8_kernel_refuses(graph::Graph& g, const graph::Node& conv) {
  // A QLinearConv's own weights (the Conv it stands for reads them as they are).
  if (const auto w = g.type_of(conv.inputs.at(1)); w && w->dtype == ir::DataType::u8())
    return "uint8 weights: kiln's int8 kernels take int8 weights (symmetric quantization)";
  return "";
}

}  // namespace

std::string int8_conv_key(const graph::Node& conv) {
  return conv.name.empty() ? conv.outputs.at(0) : conv.name;
}

std::string int8_path_reason(graph::Graph& g, const graph::Node& conv, const Target& t,
                             const Int8Paths& paths) {
  if (t.name.empty() || conv.op_type != "Conv") return "";
  if (std::string refused = int8_kernel_refuses(g, conv); !refused.empty()) return refused;
  if (paths.force == Int8Paths::Force::Int8) return "";
  if (paths.force == Int8Paths::Force::Float) return kForcedFloatPath;
  if (auto it = paths.measured.find(int8_conv_key(conv)); it != paths.measured.end())
    return it->second;
  return int8_conv_keeps_float(g, conv, t);
}

std::string int8_conv_keeps_float(graph::Graph& g, const graph::Node& conv, const Target& t) {
  if (t.name.empty() || conv.op_type != "Conv") return "";
  if (std::string refused = int8_kernel_refuses(g, conv); !refused.empty()) return refused;
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
