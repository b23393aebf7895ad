// LSTM, GRU and RNN: what a node asks for, read once for both of its users, the reference
// evaluator (recurrent.cpp) and the network compiler, which unrolls the recurrence into
// kernels kiln has (network/unroll_recurrent.h).
//
// The ONNX forms: inputs X, W, R, B, sequence_lens, initial_h (and for LSTM initial_c, P);
// outputs Y, Y_h (and for LSTM Y_c). Gate blocks are stacked in W, R and B in the order
// i, o, f, c (LSTM), z, r, h (GRU) and i (RNN).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// One of the activation functions the recurrences apply, with its coefficients.
struct RecurrentActivation {
  std::string op;  // as the ONNX operator of the same name: Sigmoid, Tanh, Relu, ...
  float alpha = 0, beta = 0;

  double apply(double x) const;
};

struct Recurrence {
  std::string kind;   // "LSTM", "GRU" or "RNN"
  int64_t gates = 1;  // 4, 3 or 1 blocks of hidden rows in W and R
  int64_t hidden = 0;
  int64_t directions = 1;
  bool reverse = false;       // direction "reverse": the only direction runs back in time
  bool batch_first = false;   // layout 1: X is [batch, seq, input], Y [batch, seq, dirs, hidden]
  std::optional<float> clip;  // bounds every gate's input to [-clip, clip]
  bool input_forget = false;  // LSTM: the forget gate is 1 - the input gate
  bool linear_before_reset = false;  // GRU: r scales (H R_h^T + Rb_h), not H
  // Per direction: LSTM (f, g, h), GRU (f, g), RNN (f).
  std::vector<std::vector<RecurrentActivation>> activations;

  bool runs_backward(int64_t direction) const { return reverse || direction == 1; }
};

// The ONNX names of the activation functions supported in a recurrence.
const std::vector<std::string>& recurrent_activation_ops();

// Reads a recurrence from its node; `hidden_rows` is W's second dimension (gates x hidden),
// which gives the hidden size when the attribute is absent. UserError for what is not
// supported, naming it.
Recurrence read_recurrence(const Node& node, int64_t hidden_rows);

}  // namespace kiln::graph
