// Lowering a graph (after the graph passes, BN folding and epilogue fusion) to kernel calls:
// each node becomes its workload (op_table.h), dispatched to a template and config through
// apply-history-best; constants are packed for their kernel and appended to the params;
// activations that a kernel reads or writes in NCHW[x]c get layout_transform kernels around
// it, and a blocked value is kept blocked for every consumer that reads the same block, so
// consecutive convolutions convert nothing between them. Values keep the element type the
// graph gives them (f32, or bf16/f16 where assign_precision put it): buffers are sized by it,
// a conv/dense with a half data input runs in that type (writing f32 where its output is
// f32), Cast nodes become cast kernels in their input's layout, and constants are converted
// to the type of the kernel argument they feed.
#pragma once

#include "compiler/graph/graph.h"
#include "network/network_program.h"
#include "network/node_choice.h"
#include "compiler/target/target.h"
#include "tuner/history_best.h"

namespace kiln::network {

// `choices` (optional): the template and config of the nodes it names, taken as given.
NetworkProgram lower_network(graph::Graph& graph, const Target& target,
                             const tuner::HistoryBest& history, const NodeChoices* choices = nullptr);

}  // namespace kiln::network
