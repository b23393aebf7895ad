#include "compiler/graph/rewrites/split_to_slices.h"

namespace kiln::graph {


int split_to_slices(Graph& g) {
  int rewritten = 0;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    if (n.op_type != "Split") {
      out.push_back(std::move(n));
      continue;
    }
    std::optional<graph::ValueType> t = g.type_of(n.inputs[0]);
    user_check(t && t->is_concrete()) << g.describe(n) << ": the input has no concrete shape";
    const int64_t rank = static_cast<int64_t>(t->dims().size());
    int64_t axis = n.attr_int("axis", 0);
    if (axis < 0) axis += rank;
    user_check(axis >= 0 && axis < rank) << g.describe(n) << ": axis " << n.attr_int("axis", 0)
                                         << " is out of range for rank " << rank;
    const std::string axes = g.add_constant(n.outputs[0] + ".axes", HostTensor::i64_vector({axis}));
    int64_t begin = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const std::string& part = n.outputs[k];
      user_check(g.type_of(part) && g.type_of(part)->is_concrete())
          << g.describe(n) << ": output '" << part << "' has no concrete shape";
      const int64_t extent = g.type_of(part)->dims()[axis];
      {
        Node slice;
        slice.name = n.name.empty() ? part : n.name + "/" + std::to_string(k);
        slice.op_type = "Slice";
        slice.inputs = {
            n.inputs[0], g.add_constant(part + ".starts", HostTensor::i64_vector({begin})),
            g.add_constant(part + ".ends", HostTensor::i64_vector({begin + extent})), axes};
        slice.outputs = {part};
        slice.source_index = n.source_index;
        out.push_back(std::move(slice));
      }
      begin += extent;
    }
    ++rewritten;
  }
  g.nodes = std::move(out);
  return rewritten;
}

}  // namespace kiln::graph
