// libFuzzer target for the ONNX frontend: any byte string must either import (and then go
// through shape binding, inference and constant folding) or fail with a kiln::UserError.
// A crash, a sanitizer report or an InternalError (a kiln bug) stops the fuzzer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "compiler/graph/bind.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"

namespace {

// Gives every unknown input dimension a small size, so inference and folding run too.
bool bind_small(kiln::graph::Graph& graph) {
  kiln::graph::ShapeBindings bindings;
  for (const std::string& in : graph.inputs) {
    const kiln::graph::ValueType& t = graph.types.at(in);
    if (!t.shape) return false;
    std::vector<int64_t> dims;
    for (const kiln::graph::Dim& d : *t.shape) dims.push_back(d.known() ? d.value : 2);
    bindings[in] = dims;
  }
  kiln::graph::bind_input_shapes(graph, bindings);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small tensors only, so that every input runs in milliseconds.
  kiln::graph::set_max_tensor_bytes(int64_t{1} << 22);
  try {
    kiln::graph::Graph graph = kiln::graph::import_onnx_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    if (bind_small(graph)) kiln::graph::run_graph_passes(graph);
  } catch (const kiln::UserError&) {
    return 0;  // bad input, reported cleanly
  } catch (const kiln::InternalError& e) {
    std::fprintf(stderr, "InternalError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
