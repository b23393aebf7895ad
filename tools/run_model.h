// `kiln run`'s pieces shared by the local run (run.cpp: the runtime in this process) and the
// farm run (run_farm.cpp: a board of the device farm): the options, reading the --input files
// against the model's inputs, the latency line, and writing the outputs as NAME.npy.
#pragma once

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

// The values of every model input, in the model's order, from --input NAME=FILE specs: every
// input needs exactly one, of the right size. UserError naming the input or file otherwise.
std::vector<std::vector<float>> read_inputs(const std::vector<TensorInfo>& inputs,
                                            const std::vector<std::string>& specs);

// "latency over N runs (T threads): median ... ms, mean ..., min ..., max ..." (`where`, e.g.
// " on worker w3", goes after the thread count).
void print_latency(const std::vector<double>& ms, const std::string& threads,
                   const std::string& where = "");

// Each output as DIR/NAME.npy, one "wrote PATH" line each; nothing when `dir` is empty.
void write_outputs(const std::string& dir, const std::vector<TensorInfo>& outputs,
                   const std::vector<std::vector<float>>& values);

// `kiln run DIR --farm HOST:PORT --key KEY`: run_farm.cpp (only in builds with the farm).
int run_model_on_farm(const RunArgs& a);

}  // namespace kiln::tools
