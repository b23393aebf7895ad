// `kiln compile --records --max-error E --calibration DIR`: the per-layer precision the records
// time fastest (half_paths.h, int8_paths.h), with as few of its fast layers moved back to the
// precise form as keep the outputs within E of the precise model's.
//
// The error of a choice is measured, not estimated: its program is written as a model into a
// scratch folder, loaded by the runtime and run on each input here. It is the relative RMS
// difference sqrt(sum (y - y_ref)^2 / sum y_ref^2) of each output against the precise
// program's (every layer f32, every quantized conv on its float path), over all the inputs, the
// largest over the outputs.
//
// The fast layers are ranked by the time the records say they save (one with no record saves
// nothing known, so it goes back first). The search keeps the longest prefix of that ranking
// whose error is within the budget, by bisection: about log2(n) + 2 runs, not n. The error is
// not always monotonic in the prefix, so the bisection finds a prefix within the budget whose
// next one is not; what compiles has always been measured within the budget.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/tensor.h"
#include "compiler/target/target.h"
#include "network/assign_precision.h"
#include "network/network_program.h"

namespace kiln::network {

struct ErrorBudget {
  double max_error = 0;  // the relative RMS error allowed on every output
  std::vector<std::map<std::string, graph::HostTensor>> inputs;  // by input name
};

// A layer the records' choice runs in a fast form: a half type, or a quantized conv's int8
// kernel (`int8`).
struct FastLayer {
  std::string node;  // node_key, or int8_conv_key for a quantized conv
  bool int8 = false;
  double saves_s = 0;  // its precise form's time less its fast form's (0: not both timed)
};

struct ErrorBudgetFit {
  double max_error = 0;
  size_t inputs = 0;
  std::vector<std::string> kept_fast;  // in the order of their saving, largest first
  std::vector<std::string> moved;      // to the precise form (or with a layer they are tied to)
  double error = 0;                    // of the choice compiled
  double error_all_fast = 0;           // of the records' choice
  int runs = 0;                        // programs built and run, the precise one included
  std::map<size_t, double> errors;     // each measured, by the count of layers kept fast
};

// The outputs of `program` (built for `target`, which must run here) on each input, each
// output's values over all inputs in order, as doubles. UserError when an input is missing or
// of another dtype or size than the program's.
std::vector<std::vector<double>> run_program_here(
    const NetworkProgram& program, const Target& target,
    const std::vector<std::map<std::string, graph::HostTensor>>& inputs);

// The relative RMS error of `got` against `want`, the largest over the outputs (0 when both
// are all zeros; infinite when `want` is and `got` is not).
double relative_rms_error(const std::vector<std::vector<double>>& got,
                          const std::vector<std::vector<double>>& want);

// The network built at a precision, and which of the fast layers run fast in it (moving one
// layer may move others: a depthwise conv runs half only where its readers do).
struct FastProgram {
  NetworkProgram program;
  std::set<std::string> fast;
};
using ProgramFor = std::function<FastProgram(const PrecisionOptions&)>;

// `chosen`: the records' choice; `fast`: its fast layers; `program_for` builds the network at a
// precision. Returns the fit, and in `fitted` the precision to compile (`chosen` with the moved
// layers precise). Prints a line per run to `progress` when not null.
ErrorBudgetFit fit_error_budget(const ErrorBudget& budget, const Target& target,
                                const PrecisionOptions& chosen, std::vector<FastLayer> fast,
                                const ProgramFor& program_for, PrecisionOptions& fitted,
                                std::ostream* progress);

// One line for `kiln compile`'s report.
std::string describe(const ErrorBudgetFit& fit);

}  // namespace kiln::network
