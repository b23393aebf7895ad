#include "compiler/graph/rewrites/fuse_channel_shuffle.h"

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {

namespace {

// The value's sizes when its shape is known, else empty.
std::vector<int64_t> known_dims(const Graph& g, const std::string& value) {
  std::optional<ValueType> t = g.type_of(value);
  return t && t->is_concrete() ? t->dims() : std::vector<int64_t>{};
}

// The group count g when `split` ([N, g, C/g, d...]) is `x` ([N, C, d...]) with its channels
// split in two, else 0.
int64_t split_groups(const std::vector<int64_t>& x, const std::vector<int64_t>& split) {
  if (x.size() < 2 || split.size() != x.size() + 1 || split[0] != x[0]) return 0;
  if (split[1] <= 0 || split[1] * split[2] != x[1]) return 0;
  for (size_t d = 2; d < x.size(); ++d)
    if (split[d + 1] != x[d]) return 0;
  return split[1];
}

// Whether `perm` swaps axes 1 and 2 and keeps the others.
bool swaps_group_axes(const std::vector<int64_t>& perm) {
  if (perm.size() < 3 || perm[0] != 0 || perm[1] != 2 || perm[2] != 1) return false;
  for (size_t d = 3; d < perm.size(); ++d)
    if (perm[d] != static_cast<int64_t>(d)) return false;
  return true;
}

// The Concat's inputs when `x` is a channel Concat that only the shuffle reads (`reader`) and
// every input begins at a multiple of `run` channels; else nothing.
std::vector<std::string> folded_concat(const Graph& g, const std::string& x, const Node& reader,
                                       int64_t run) {
  const Node* cat = producer_op(g, x, "Concat");
  if (!cat || !cat->epilogue.empty() || only_reader(g, x) != &reader) return {};
  const int64_t rank = static_cast<int64_t>(known_dims(g, x).size());
  const int64_t axis = cat->attr_int("axis", 0);
  if (axis != 1 && axis != 1 - rank) return {};
  int64_t offset = 0;
  for (const std::string& in : cat->inputs) {
    const std::vector<int64_t> d = known_dims(g, in);
    if (in.empty() || g.is_constant(in) || d.size() < 2 || offset % run != 0) return {};
    offset += d[1];
  }
  return cat->inputs;
}

}  // namespace

int fuse_channel_shuffle(Graph& g) {
  struct Match {
    std::string out;
    Node fused;
    std::set<std::string> interior;
  };
  std::vector<Match> matches;
  for (const Node& back : g.nodes) {
    if (back.op_type != "Reshape" || !back.epilogue.empty()) continue;
    const Node* transpose = producer_op(g, back.inputs[0], "Transpose");
    if (!transpose || !transpose->epilogue.empty() || only_reader(g, back.inputs[0]) != &back)
      continue;
    const Node* split = producer_op(g, transpose->inputs[0], "Reshape");
    if (!split || !split->epilogue.empty() || only_reader(g, transpose->inputs[0]) != transpose)
      continue;
    const std::string& x = split->inputs[0];
    const std::vector<int64_t> x_dims = known_dims(g, x);
    const int64_t groups = split_groups(x_dims, known_dims(g, split->outputs[0]));
    if (groups == 0 || !swaps_group_axes(transpose->attr_ints("perm")) ||
        known_dims(g, back.outputs[0]) != x_dims)
      continue;
    Node fused;
    fused.op_type = "ChannelShuffle";
    fused.attrs["group"] = groups;
    std::set<std::string> interior = {split->outputs[0], transpose->outputs[0]};
    fused.inputs = folded_concat(g, x, *split, x_dims[1] / groups);
    if (fused.inputs.empty())
      fused.inputs = {x};
    else
      interior.insert(x);
    matches.push_back({back.outputs[0], std::move(fused), std::move(interior)});
  }
  for (Match& m : matches) replace_pattern(g, m.out, std::move(m.fused), m.interior);
  return static_cast<int>(matches.size());
}

}  // namespace kiln::graph
