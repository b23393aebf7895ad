// Private to the runtime: the parser of a model's kiln_model_info record (format in
// kiln/kernel_abi.h), written without iostreams or regex to keep the runtime small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/model.h"

namespace kiln {

// The most inputs, and the most outputs, a model may have: Model::run keeps one pointer per
// tensor on its stack.
inline constexpr std::size_t kMaxModelTensors = 64;
inline constexpr std::size_t kMaxBatchClasses = 8;

struct ModelInfo {
  std::string name;
  uint64_t workspace_bytes = 0;
  uint64_t params_bytes = 0;
  uint64_t params_checksum = 0;
  // The "verify" line's points " S C S C ..." as the record has them: ParamsFirstUse reads them
  // as the first run goes (a view into the record, which lives as long as the module).
  std::string_view verify;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // The "batch MIN MAX FLAGS" line (0 and 0 without one): inputs and outputs flagged batched
  // then describe MIN samples, as the record's one-sample shapes scaled along axis 0.
  int64_t min_batch = 0, max_batch = 0;
  // Its batch classes (kernel_abi.h): the samples each runs at once, increasing; class 0 is the
  // one-sample program, then num_batch_classes more.
  int64_t batch_classes[kMaxBatchClasses + 1] = {1};
  std::size_t num_batch_classes = 0;
  // "pad" at the end of the batch line: the last run of a batch takes the smallest class that
  // holds what is left, its free samples copies of the last one (exact: samples are
  // independent), rather than several smaller runs.
  bool pad_batches = false;
  // The bytes of a run of the largest class through staging buffers, when padding: every batched
  // input's and every output's samples.
  uint64_t staging_bytes() const;
};

// Bytes per element of a dtype name of the info record; 0 for a name it does not have.
std::size_t dtype_bytes(std::string_view dtype);

// Parses the record; `source` (the .so's path) names it in errors. Throws
// RuntimeError(kLoad) naming the line for anything malformed, and for a format version other
// than KILN_MODEL_INFO_VERSION.
ModelInfo parse_model_info(std::string_view text, const std::string& source);

}  // namespace kiln
