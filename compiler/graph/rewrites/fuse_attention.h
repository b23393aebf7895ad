// Recognises scaled dot-product attention as exporters write it,
//   S = MatMul(Q, Kt) [+ Mask]; P = Softmax(S, last axis); O = MatMul(P, V)
// over the same batch dimensions (heads), with Kt the keys transposed and any scaling of
// the scores already moved onto Q or Kt (scale_matmul_operand.h), and replaces it with one
// Attention node (inputs Q, Kt, V[, Mask]), which runs as the attention kernel
// (schedules/attention/attention.h): the scores stay in a block buffer in cache instead of making
// three or four passes over memory.
//
// The mask may broadcast as attention masks do (attention_mask_form). Scores with a second
// reader, masks broadcast otherwise and rows longer than the kernel's block buffer stay
// unfused.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// How a mask of shape `mask` broadcasts over scores of shape `scores` ([batch dims.., M, N]),
// in the attention workload's terms (schedules/attention/attention.h): batch b reads the
// mask's batch (b / every) % batches, each row its row 0 (rows 1) or its own (rows M). Nothing
// when the mask broadcasts along N, or along batch dimensions between two it does not
// broadcast.
struct AttentionMask {
  int64_t batches = 1, every = 1, rows = 1;
};
std::optional<AttentionMask> attention_mask_form(const std::vector<int64_t>& scores,
                                                 std::vector<int64_t> mask);

// Returns the number of attentions fused: those whose score rows are at most `max_keys` long
// (the attention kernel keeps a row block's scores on its stack).
int fuse_attention(graph::Graph& graph, int64_t max_keys);

}  // namespace kiln::graph
