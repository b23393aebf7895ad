// 1-D convolutions, pools and batch norms as the 2-D ones kiln's kernels implement. Audio and
// speech models (Whisper, wav2vec2) open with Conv1d layers, text CNNs use them throughout,
// LeViT and MLP heads apply BatchNorm1d to [N, C], and Swin's pooler is AdaptiveAvgPool1d.
//
// An [N, C, L] operand becomes [N, C, 1, L]: a 1 x k window over a map of height 1 computes
// what the k window computes over L, so the rewrite is exact. Every spatial attribute gains a
// leading 1 (pads a leading 0 per side), a Conv's [O, I, k] weight becomes [O, I, 1, k], and
// the result is reshaped back to rank 3 for whatever reads it. Consecutive lifted nodes, and
// elementwise nodes between them (the GELU between two Conv1d), pass the 4-D value along
// without the reshapes in between, so a stack of Conv1d stays one blocked 2-D chain and
// BatchNorm1d after Conv1d still folds into it. BatchNormalization of [N, C] runs as
// [N, C, 1, 1].
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes lifted.
int lift_1d_to_2d(graph::Graph& g);

}  // namespace kiln::graph
