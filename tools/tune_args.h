// What `kiln tune` shares between tuning one operator (tune.cpp) and a whole network
// (tune_network.cpp): the parsed flags, the per-task options built from them, the runner
// (the farm given, or an embedded one), Ctrl-C handling and the AutoTVM-style progress line.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tools/workload_args.h"
#include "tuner/embedded_farm.h"
#include "tuner/records.h"
#include "tuner/task_tuner.h"

namespace kiln::tools {

struct TuneArgs {
  std::string model;  // an .onnx file: tune the whole network
  std::vector<std::string> input_shapes;
  std::vector<std::string> ranges;  // --range batch=1..16: tune what compile builds for it
  std::string batch_classes = "auto";  // with --range, as kiln compile takes it
  std::string precisions;  // network: "int8,f32" measures both paths of each quantized conv
  std::string time_budget;
  WorkloadArgs workload;
  std::string target = "host", tmpl, tuner = "xgb", log, features = "ir";
  std::string farm, key, token_file, tls_ca;
  std::string build_key;  // --farm: compile candidates on this key's builders
  std::string runner = "farm";  // "analyze": times predicted by llvm-mca, nothing run
  int builders = 0;       // embedded farm: builder workers started beside the measuring ones
  std::string overlap_builds = "auto";  // on with --farm, off with the embedded farm
  std::vector<std::string> transfer;
  size_t trials = 100, batch = 16, early_stopping = 0;
  size_t layout_choices = 1;  // network: channel-block pins tuned per conv task
  uint64_t seed = 0;
  int threads = 1, workers = 0, repeat = 3;
  uint32_t remeasure_rounds = 5;  // the end-of-tune re-measurement's rounds (task_tuner.h)
  double min_repeat_ms = 20, timeout_s = 10, build_timeout_s = 60;
  bool quiet = false, old_space = false;
  bool skip_untuned = false;  // --op: do not measure the template's fallback config first
  bool keep_last_f32 = true;  // a network with --dtype bf16|f16 (tools/precision_args.h)
};

// Set by the first Ctrl-C (or SIGTERM) once install_interrupt_handler() ran; a second exits.
extern std::atomic<bool> g_stop;
void install_interrupt_handler();

// The per-task tuning options the flags give.
tuner::TuneOptions task_options(const TuneArgs& a);

// The farm given by --farm, or an embedded one for `target` (kept in `embedded`).
std::unique_ptr<tuner::Runner> make_runner(const TuneArgs& a, const Target& target,
                                           std::unique_ptr<tuner::EmbeddedFarm>& embedded);
// The builders candidates compile on (tuner/measure/farm_builders.h): --build-key's on the
// farm given, or the embedded farm's (--builders N); null: this machine compiles them.
std::shared_ptr<tuner::FarmBuilders> make_builders(const TuneArgs& a,
                                                   const tuner::EmbeddedFarm* embedded);

// The records the log already holds for `target` (resume), its bad lines reported.
std::vector<tuner::TuningRecord> load_log(const std::string& path, const Target& target);

// The log opened for appending (a torn last line that a kill left is cut off and reported).
std::unique_ptr<tuner::RecordWriter> open_log(const std::string& path);

// "[Task  3/12] Current/Best: ... GFLOPS | Progress: (16/64) | 3.2 s", on stderr, refreshed
// in place on a terminal; `extra` is appended (a network's running latency estimate).
void print_progress(size_t task, size_t tasks, const tuner::TuneStatus& s, const std::string& extra);
void end_progress_line();

// `kiln tune MODEL.onnx ...` (tune_network.cpp).
int run_network_tune(const TuneArgs& a);

}  // namespace kiln::tools
