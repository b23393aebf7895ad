#include "compiler/graph/rewrites/fuse_attention.h"

#include <optional>
#include <set>

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {


namespace {

struct AttentionMatch {
  std::string q, kt, v, mask, out;
  std::set<std::string> interior;
};

std::optional<std::vector<int64_t>> f32_dims(const Graph& g, const std::string& value) {
  std::optional<graph::ValueType> t = g.type_of(value);
  if (!t || !t->is_concrete() || t->dtype != graph::DataType::f32()) return std::nullopt;
  return t->dims();
}

// A MatMul of two computed operands of one rank >= 2 whose batch dimensions agree: the
// batched form map_matmul gives batch_matmul, not a dense layer of constant weights.
bool batched_matmul(const Graph& g, const Node& n) {
  if (n.op_type != "MatMul" || n.inputs.size() != 2 || !n.epilogue.empty() ||
      g.is_constant(n.inputs[1]))
    return false;
  auto a = f32_dims(g, n.inputs[0]), b = f32_dims(g, n.inputs[1]);
  if (!a || !b || a->size() != b->size() || a->size() < 2) return false;
  return std::equal(a->begin(), a->end() - 2, b->begin());
}

std::optional<AttentionMatch> match_at(const Graph& g, const Node& softmax, int64_t max_keys) {
  if (softmax.op_type != "Softmax" || !softmax.epilogue.empty()) return std::nullopt;
  auto s = f32_dims(g, softmax.inputs[0]);
  if (!s) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(s->size());
  int64_t axis = softmax.attr_int("axis", g.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (rank < 2 || axis != rank - 1 || s->back() > max_keys) return std::nullopt;
  AttentionMatch m;
  m.interior = {softmax.inputs[0], softmax.outputs[0]};
  std::string raw = softmax.inputs[0];  // the MatMul's scores
  if (const Node* add = producer_op(g, raw, "Add"); add && add->epilogue.empty()) {
    if (only_reader(g, raw) != &softmax) return std::nullopt;
    for (const std::string& x : add->inputs)
      if (producer_op(g, x, "MatMul") && m.mask.empty()) raw = x;
    m.mask = other_input(*add, raw);
    auto mask = f32_dims(g, m.mask);
    if (raw == softmax.inputs[0] || !mask || f32_dims(g, raw) != s ||
        !attention_mask_form(*s, *mask))
      return std::nullopt;
    m.interior.insert(raw);
  }
  const Node* scores = producer_op(g, raw, "MatMul");
  if (!scores || !batched_matmul(g, *scores) || !only_reader(g, raw)) return std::nullopt;
  const Node* context = only_reader(g, softmax.outputs[0]);
  if (!context || !batched_matmul(g, *context) || context->inputs[0] != softmax.outputs[0])
    return std::nullopt;
  auto v = f32_dims(g, context->inputs[1]);
  if (!v || !std::equal(s->begin(), s->end() - 1, v->begin())) return std::nullopt;
  m.q = scores->inputs[0], m.kt = scores->inputs[1], m.v = context->inputs[1];
  m.out = context->outputs[0];
  return m;
}

}  // namespace

std::optional<AttentionMask> attention_mask_form(const std::vector<int64_t>& scores,
                                                 std::vector<int64_t> mask) {
  const size_t r = scores.size();
  if (r < 2 || mask.size() > r) return std::nullopt;
  mask.insert(mask.begin(), r - mask.size(), 1);
  if (mask[r - 1] != scores[r - 1] || (mask[r - 2] != 1 && mask[r - 2] != scores[r - 2]))
    return std::nullopt;
  AttentionMask f;
  f.rows = mask[r - 2];
  // The batch dimensions the mask has (not broadcast) must be one run: the mask's batch is
  // then (b / every) % batches, every the product of the dimensions after the run.
  bool run_ended = false;
  for (size_t k = 0; k + 2 < r; ++k) {
    if (scores[k] == 1) continue;
    if (mask[k] == scores[k]) {
      if (run_ended && f.batches > 1) return std::nullopt;
      f.batches *= mask[k];
      f.every = 1;
    } else if (mask[k] == 1) {
      run_ended = f.batches > 1 || run_ended;
      f.every *= scores[k];
    } else {
      return std::nullopt;
    }
  }
  return f;
}

int fuse_attention(Graph& g, int64_t max_keys) {
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : g.nodes) {
      std::optional<AttentionMatch> m = match_at(g, n, max_keys);
      if (!m) continue;
      Node attention;
      attention.op_type = "Attention";
      attention.inputs = {m->q, m->kt, m->v};
      if (!m->mask.empty()) attention.inputs.push_back(m->mask);
      replace_pattern(g, m->out, std::move(attention), m->interior);
      ++fused;
      changed = true;
      break;
    }
  }
  return fused;
}

}  // namespace kiln::graph
