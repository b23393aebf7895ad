// `kiln run`'s pieces shared by the local run (run.cpp: the runtime in this process) and the
// farm run (run_farm.cpp: a board of the device farm): the options, reading the --input files
// against the model's inputs, the latency line, and writing the outputs as NAME.npy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/model.h"

namespace kiln::tools {

struct RunArgs {
  std::string dir, output, profile;
  std::vector<std::string> inputs;
  int runs = 10, threads = 0;
  // --farm: run on a board of the farm instead of here.
  std::string farm, key, token_file, tls_ca;
  double timeout_s = 600;
};

// The bytes of every model input, in the model's order, from --input NAME=FILE specs: every
// input needs exactly one (a name given twice is refused), of the right size, and a .npy of
// exactly the input's shape; a .npy of another dtype is converted where each
// value survives (an int32 or float file of token ids for an i64 input). UserError naming the
// input or file otherwise.
// With `shapes` (a model with a ranged batch), a batched input may hold any number of samples
// along axis 0 (the runtime checks the range): `shapes` receives each file's shape.
std::vector<std::string> read_inputs(const std::vector<TensorInfo>& inputs,
                                     const std::vector<std::string>& specs,
                                     std::vector<std::vector<int64_t>>* shapes = nullptr);

// The model's outputs as a run of `batch` samples writes them: batched ones scaled along axis 0
// from the model's smallest batch (kiln/model.h).
std::vector<TensorInfo> outputs_at_batch(const Model& model, int64_t batch);
// The --input NAME=FILE specs as a map (split at the first '='), checked before any work:
// UserError for a spec without a name or file, or a name given twice.
std::map<std::string, std::string> input_files(const std::vector<std::string>& specs);

// "latency over N runs (T threads): median ... ms, mean ..., min ..., max ..." (`where`, e.g.
// " on worker w3", goes after the thread count).
void print_latency(const std::vector<double>& ms, const std::string& threads,
                   const std::string& where = "");

// An output's file name: its name with every character but letters, digits, '.', '-' and '_'
// made '_' (exporters name outputs "/encoder/layer.0/Add_output_0").
std::string output_file_name(const std::string& name);

// Each output (`values`: its bytes) as DIR/NAME.npy of its dtype, one "wrote PATH" line each;
// nothing when `dir` is empty. Names that clash once made file names get "_INDEX".
void write_outputs(const std::string& dir, const std::vector<TensorInfo>& outputs,
                   const std::vector<std::string>& values);

// `kiln run DIR --farm HOST:PORT --key KEY`: run_farm.cpp (only in builds with the farm).
int run_model_on_farm(const RunArgs& a);

}  // namespace kiln::tools
