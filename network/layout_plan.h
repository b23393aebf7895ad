// The joint layout choice of `kiln compile --records` (AutoTVM's graph tuner on kiln's
// network): which tuned config, and so which channel blocks, each kernel call of the network
// runs with, chosen for the whole network rather than per kernel.
//
// Apply-history-best alone takes each workload's fastest record. When the log holds records
// of several channel blocks for a conv (`kiln tune --layout-choices N` tunes a few per task),
// the fastest kernel may write a layout its consumer does not read, and the conversion
// between them can cost more than the kernel won. Here every node becomes a call of a
// LayoutProblem (layout_dp.h): a node whose workload has records has one state per channel
// block combination (the best record with those blocks: the template's ic_bn, oc_bn or c_bn
// knobs), with the layouts that config's kernel reads and writes; every other node keeps what
// the compile with the same records gives it (one state, with the layouts of the buffers that
// compile gives its kernel: a blocked elementwise op or concat reads blocks). Conversions
// cost what the log measured for that layout_transform workload, else an estimate from the
// bytes they move (kConversionBandwidth, plus a fixed call overhead); those estimated are
// listed so that `kiln tune` can measure them. A conversion is costed from the producer's
// layout; lowering converts from the widest copy of the value it holds, which moves the same
// bytes.
//
// The plan names a template and config for every node (node_choice.h), so lowering with it
// builds exactly the layouts that were costed. It is never worse than apply-history-best's
// own answer by this cost: when the solver's answer costs more, that answer is kept.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "network/layout_dp.h"
#include "network/node_choice.h"
#include "compiler/target/target.h"
#include "tuner/record.h"

namespace kiln::network {

// Bytes per second the estimate of an unmeasured conversion assumes (read + write).
inline constexpr double kConversionBandwidth = 10e9;
inline constexpr double kConversionOverhead_s = 2e-6;

struct LayoutPlan {
  NodeChoices choices;          // every node's template and config
  LayoutSolution chosen;        // the cost of the plan
  LayoutSolution history_best;  // the cost of apply-history-best's per-kernel answer
  size_t calls_with_choices = 0;  // nodes with records of more than one block combination
  // Conversions the cost was estimated for (no record in the log): measure these.
  std::vector<schedules::Workload> unmeasured_conversions;
};

// `graph`: after prepare_graph (it is copied, not changed). `records`: the tuning log's.
LayoutPlan plan_layouts(const graph::Graph& graph, const Target& target,
                        const std::vector<tuner::TuningRecord>& records);

// One line for `kiln compile`'s report: calls with a choice, conversions and estimated costs.
std::string describe(const LayoutPlan& plan);

}  // namespace kiln::network
