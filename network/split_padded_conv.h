// A conv whose taps mostly read padding, split into regions that read none. DeepLabV3's ASPP
// conv of dilation 12 on a 14x14 map reaches the map with its outer taps for 2 of 14 rows and
// columns: 18% of the taps it computes read a pixel, the rest multiply the zero padding.
// Along each spatial axis the output positions fall into bands whose live taps (those that
// read a pixel) are the same; each pair of bands is a conv of those taps alone, without
// padding, over the slice of the input they read, and Concats put the regions back together
// (the bands of columns in each band of rows, then the rows).
//
// Split: a Conv of constant f32 weights, one group, stride 1, with explicit pads and an
// epilogue of activations only (a residual would need slicing too), where each axis has at
// most five bands and the regions cost at most half the whole conv, counting the weights
// each region reads again (a 3x3 conv on a 2x2 map, 4 regions of one pixel, stays whole). Run after
// the epilogues are fused: each region takes the conv's bias and epilogue.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of convs split.
int split_padded_convs(graph::Graph& graph);

}  // namespace kiln::network
