// Binding input shapes: giving every symbolic or unknown dimension of the graph inputs a size
// before shape inference, as `--input-shape NAME=1,3,224,224` does on the command line.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// One binding's sizes. Where an input's binding names a symbol instead of a size
// (`--input-shape x=N,3,48,W`), that dimension is declared symbolic under that name, whatever
// the ONNX file says (a fixed size, or another symbol, which is renamed in every input):
// `symbols[i]` is the name and the size is -1. A range or a symbol binding then sizes it.
struct ShapeSpec : std::vector<int64_t> {
  using std::vector<int64_t>::vector;
  ShapeSpec(std::vector<int64_t> sizes) : std::vector<int64_t>(std::move(sizes)) {}
  std::vector<std::string> symbols;  // empty, or one per dimension ("" where a size is given)
  bool is_symbol(size_t i) const { return i < symbols.size() && !symbols[i].empty(); }
  std::string str() const;  // "[N,3,48,W]"
};

// Keys are graph input names (the whole shape) or symbolic dimension names such as "batch"
// (one size, for every input dimension with that symbol).
using ShapeBindings = std::map<std::string, ShapeSpec>;

// Applies the symbols that input bindings declare (`x=N,3,48,W`): each such dimension becomes
// symbolic under the user's name. A dimension the file names otherwise has its symbol renamed
// in every input, so the inputs that share it keep sharing it. UserError: a binding with
// symbols whose key is not an input, or of the wrong rank. bind_input_shapes does this first.
void declare_input_symbols(Graph& graph, const ShapeBindings& bindings);

// Applies the bindings; then every input must be concrete. UserErrors: a key that names
// neither an input nor a symbol, a shape that contradicts a fixed dimension or the rank, and
// (one message listing them all) every dimension still unbound, with the input that has it.
void bind_input_shapes(Graph& graph, const ShapeBindings& bindings);

// Turns graph inputs into constants with the given values, for inputs that carry shapes,
// scales or axes rather than data (kiln compiles for fixed shapes). UserErrors: a name that
// is not an input, a value whose type contradicts the input's declared type.
void freeze_inputs(Graph& graph, const std::map<std::string, HostTensor>& values);

// The user address space of a 64-bit board (x86-64 and AArch64 Linux): no tensor or model
// beyond it can run anywhere kiln targets.
inline constexpr long double kAddressSpaceBytes = 140737488355328.0L;  // 2^47

// The check alone: a UserError listing every unbound input dimension (and one whose size is
// beyond kAddressSpaceBytes).
void check_inputs_bound(const Graph& graph);

// "NAME=1,3,224,224" -> {"NAME", {1,3,224,224}}; "NAME=" is a scalar; "x=N,3,48,W" declares
// two symbols (a letter or '_' first). The last '=' splits, so names may contain '=' (and ':'
// as TensorFlow's do).
std::pair<std::string, ShapeSpec> parse_shape_binding(std::string_view spec);

// Parses `spec` into `bindings`. UserError when its name was bound before to other sizes
// (`--input-shape batch=1 --input-shape batch=2` is a contradiction, not "the last wins").
void add_shape_binding(ShapeBindings& bindings, std::string_view spec);

// A declared range of one symbolic dimension: `--range batch=1..16`.
struct DimRange {
  std::string symbol;
  int64_t min = 0, max = 0;
};

// "batch=1..16" -> {"batch", 1, 16}. UserError for another form, a size below 1, or min > max.
DimRange parse_dim_range(std::string_view spec);

}  // namespace kiln::graph
