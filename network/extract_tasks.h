// Task extraction (AutoTVM's extract_from_program): the tunable workloads of a network, found
// by running exactly what `kiln compile` runs (prepare_graph, then lower_network with no
// records, so the kernel calls are those of an untuned compile: fused epilogues, layout
// conversions and all). Each unique workload comes once, with how many kernel calls of the
// network compute it and the templates worth measuring for it on the target (every one that
// can build it, less those that cannot win: choose_template.h's tuning_templates); a
// workload is tunable when one of those templates has more than one config.
//
// Each task also carries the channel blocks its untuned kernel reads and writes (the knobs
// ic_bn, oc_bn, c_bn of the config the untuned compile chose, which follow the neighbouring
// layouts: choose_template.h). The network tuner keeps those blocks fixed, so a tuned kernel
// still shares its neighbours' NCHW[x]c layout: otherwise each tuned conv would pick its own
// blocks and the compiled network would gain a layout conversion around it, costing more than
// tuning won (measured on MobileNetV2: 43 kernels and 71 calls untuned, 58 and 95 after a
// short tune without pinning, and slower than untuned).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "network/assign_precision.h"
#include "compiler/target/target.h"
#include "schedules/op_template.h"

namespace kiln::network {

struct ExtractedTask {
  schedules::Workload workload;
  int occurrences = 0;                                  // kernel calls computing it
  std::vector<const schedules::OpTemplate*> templates;  // tuning_templates(workload, target)
  schedules::Config blocks;  // the untuned kernel's channel-block knobs (empty: none)
  // What the untuned compile builds it with: the template and the whole config (blocks and
  // register tile fitted to the neighbours). The network tune measures it first, so a tuned
  // record must beat the untuned kernel, not just the other records, to be compiled.
  const schedules::OpTemplate* untuned_template = nullptr;
  schedules::Config untuned_config;
};

// The tunable workloads, in the order the network first computes them.
// `precision` as `kiln compile --dtype` gets it: the half workloads are the tasks then. With
// `precision.int8.force` Both, the kernels of both paths of every quantized conv (int8_paths.h);
// with `precision.half_and_f32`, those of the half network and of the f32 one (half_paths.h).
std::vector<ExtractedTask> extract_tasks(const std::string& model_path, const Target& target,
                                         const graph::ShapeBindings& input_shapes = {},
                                         const PrecisionOptions& precision = {});

// The tasks of a ranged batch (`kiln compile --range`, network/ranged_batch.h): one sample's,
// then those of each batch class the compile builds (`classes`, as --batch-classes gives them;
// unset: ranged_batch.h's rule) that one sample lacks, each workload once with its calls
// summed. The classes come back in `built_classes`.
std::vector<ExtractedTask> extract_ranged_batch_tasks(
    const std::string& model_path, const Target& target, const graph::ShapeBindings& input_shapes,
    const graph::DimRange& range, const PrecisionOptions& precision,
    const std::optional<std::vector<int64_t>>& classes, std::vector<int64_t>* built_classes);

}  // namespace kiln::network
