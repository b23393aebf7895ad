// Drops the kernel rows and columns of a Conv that only ever read padding. A dilated 3x3 whose
// dilation reaches past the input (DeepLabV3's ASPP at rates 24 and 36 on a 14x14 map) reads
// real pixels with its centre tap only: it becomes a 1x1 conv of the centre weights, which
// runs as a GEMM instead of nine taps of zeros. Exact: a dropped tap only ever multiplies
// zeros. The pads shrink by what the dropped taps spanned, so the output keeps its size.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of Convs whose kernel shrank.
int prune_dead_taps(graph::Graph& graph);

// The taps of rows row_first..row_last and columns col_first..col_last (inclusive) of an
// [O, C, KH, KW] conv weight, as an [O, C, rows, columns] weight.
HostTensor crop_conv_taps(const HostTensor& weight, int64_t row_first, int64_t row_last,
                          int64_t col_first, int64_t col_last);

}  // namespace kiln::graph
