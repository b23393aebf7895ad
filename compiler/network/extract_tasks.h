// Task extraction (AutoTVM's extract_from_program): the tunable workloads of a network, found
// by running exactly what `kiln compile` runs (prepare_graph, then lower_network with no
// records, so the kernel calls are those of an untuned compile: fused epilogues, layout
// conversions and all). Each unique workload comes once, with how many kernel calls of the
// network compute it and every template that can build it on the target; a workload is
// tunable when one of those templates has more than one config.
//
// Layout conversions are extracted for the blocks of the untuned kernels; once a tuned
// convolution picks another block, its conversions are other workloads, compiled with their
// fallback configs.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/target/target.h"
#include "schedules/op_template.h"

namespace kiln::network {

struct ExtractedTask {
  schedules::Workload workload;
  int occurrences = 0;                                  // kernel calls computing it
  std::vector<const schedules::OpTemplate*> templates;  // templates_for(workload, target)
};

// The tunable workloads, in the order the network first computes them.
std::vector<ExtractedTask> extract_tasks(const std::string& model_path, const Target& target,
                                         const graph::ShapeBindings& input_shapes = {});

}  // namespace kiln::network
