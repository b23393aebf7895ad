// LSTM, GRU and RNN nodes as the kernels kiln has: the recurrence unrolled over the time steps
// (kiln compiles for fixed shapes, so the sequence length is known). OCR recognisers (CRNN's
// bidirectional LSTMs over a CNN's columns) and speech and text models use them.
//
// Per direction, the input projection of every step is one dense kernel (X W^T + biases over
// all steps at once); each step then adds H R^T (a dense kernel of batch rows), applies the
// gates' activations and updates the state, with ONNX's equations (peepholes, clip,
// input_forget, GRU's linear_before_reset, the activations list). Y, Y_h and Y_c are
// assembled by Concat and Transpose in ONNX's layouts. Constant sequence_lens mask the steps
// past each sequence's end (state kept, Y zero); W, R, B and P must be constants.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes unrolled; the new values have no types until shape inference.
int unroll_recurrent(graph::Graph& g, int64_t max_concat_inputs);

}  // namespace kiln::graph
