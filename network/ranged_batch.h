// A ranged batch (`kiln compile --range batch=1..16`): one artifact that runs any batch in the
// range exactly. The network is compiled for one sample, and optionally for a few larger batch
// classes (where batched kernels reuse their weights across samples), all sharing one params
// file; the runtime runs a batch of b as runs of the classes, largest first, each on the next
// slices along axis 0 of the batched inputs and of the outputs (kiln/model.h). That is exact only
// when the network computes every sample on its own, which compiler/graph/batch_separable.h proves
// on the graph before anything is built.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/executor.h"
#include "compiler/graph/bind.h"
#include "network/network_program.h"

namespace kiln::network {

struct BatchRange {
  std::string symbol;
  codegen::RangedBatch batch;  // min, max, and per graph input whether it carries the batch
};

// Checks that `range` names a batch: its symbol appears in the model's inputs, only as their
// axis 0, is not also bound by `bindings`, and the network computes each sample independently.
// UserError naming what is wrong otherwise (the dimension and input, or the node that mixes
// samples). `bindings` are the other --input-shape sizes.
BatchRange plan_batch_range(const std::string& model_path, const graph::ShapeBindings& bindings,
                            const graph::DimRange& range);

// The batch classes to build after one sample. `requested` (--batch-classes) is checked and
// used as given. Without it, batches of 2, 4, 8 and 16 (where the range reaches them: any batch
// then runs in at most five programs, largest first) are built when one sample alone would
// leave the machine idle: when its program streams its weights rather than computing on them
// (under kMinFlopsPerParamByte flops per byte of the weights its convolutions and dense layers
// read: an MLP at batch 1 does 0.5; a batch of 16 then runs several times faster per sample),
// or when it is too small to share among threads (under kSmallSampleFlops: BERT-base-sized
// layers at 32 tokens). A larger network computing on its weights (ResNet-18: 3.6 GFLOP, 45
// flops per weight byte) runs about as fast sample by sample, while its batched kernels may
// pack weights differently and so grow the params (ResNet-18: 81 MB to 225 MB with 4 and 16).
// Such a model also pads: the last run of a batch takes the smallest class that holds the rest
// (3 samples as one run of 4), its free samples copies of the last (exact, the samples being
// independent), where the runs of a sample-bound model would cost more.
inline constexpr double kMinFlopsPerParamByte = 4;
inline constexpr double kSmallSampleFlops = 2e8;
std::vector<int64_t> batch_classes(const BatchRange& range, const NetworkProgram& one_sample,
                                   const std::optional<std::vector<int64_t>>& requested);
// The --batch-classes argument: "auto" (nothing: the rule above), "none" (no class), or sizes
// such as "4,16". UserError naming the item that is not a size.
std::optional<std::vector<int64_t>> parse_batch_classes(const std::string& spec);
// A program's flops per byte of the weights its convolutions and dense layers read (huge when
// it has none).
double weight_reuse(const NetworkProgram& p);

// Adds `program`, the network built for `batch` samples, to `main` (the one-sample program) as
// a batch class: kernels that both build are built once, identical params bytes stored once,
// the workspace the larger of the two. Both must have had their memory planned.
void add_batch_class(NetworkProgram& main, NetworkProgram program, int64_t batch);

}  // namespace kiln::network
