// The check the operator tests of the network compiler share: compile an ONNX model for the
// host (or arm-neon, run under qemu), run model.so on random inputs and compare the outputs
// with the graph's reference evaluator by kiln's f32 rule (1e-4 relative).
#pragma once

#include <map>
#include <string>

#include "compiler/graph/bind.h"
#include "network/compile_network.h"

namespace kiln::network::test {

// The layout conversions of feature maps (H x W > 1) in a compile report.
int map_conversions(const CompileReport& r);

// Returns the compile report (its layers say which kernels ran); gtest failures on mismatch.
// Inputs named in `given` take those values (token ids, masks), the others random f32 ones;
// `record_logs`: tuning logs to compile with (--records); `rtol`: the comparison's tolerance
// (relative to max(1, |want|); a quantized model's integer path may differ from the float
// reference by one quantum of its output scale).
CompileReport expect_host_matches_reference(
    const std::string& onnx_bytes, const graph::ShapeBindings& shapes = {},
    const std::map<std::string, graph::HostTensor>& given = {},
    const std::vector<std::string>& record_logs = {}, double rtol = 1e-4);

// The same on arm-neon: model.so cross-compiled, run by the cross-built model_app under
// qemu-aarch64, its first output compared. Returns a skip reason when qemu or model_app is
// missing (empty when it ran).
std::string expect_arm_neon_matches_reference(const std::string& onnx_bytes,
                                              const graph::ShapeBindings& shapes = {});

// The same on an AArch64 `target` with `kiln compile --dtype` (keep_last_f32 as its flag), its
// first output compared within `rtol` (a half type's tolerance).
std::string expect_arm_matches_reference(const std::string& onnx_bytes, const std::string& target,
                                         ir::DataType dtype, bool keep_last_f32, double rtol,
                                         const graph::ShapeBindings& shapes = {});

// The op types of the report's layers, in order.
std::vector<std::string> layer_ops(const CompileReport& report);
// How many of `ops` are `op`.
int count(const std::vector<std::string>& ops, const std::string& op);

}  // namespace kiln::network::test
