#include "tools/tune_args.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "rpc/farm/transport.h"
#include "tools/farm_args.h"
#include "tuner/measure/farm_runner.h"
#include "tuner/measure/predicted_runner.h"
#include "compiler/codegen/machine_code_analysis.h"

namespace kiln::tools {

std::atomic<bool> g_stop = false;

namespace {

void on_interrupt(int) {
  if (g_stop) _exit(130);  // a second Ctrl-C: the user means it
  g_stop = true;
}

}  // namespace

void install_interrupt_handler() {
  signal(SIGINT, on_interrupt);
  signal(SIGTERM, on_interrupt);
}

tuner::TuneOptions task_options(const TuneArgs& a) {
  tuner::TuneOptions o;
  o.search = a.tuner;
  o.features = a.features;
  o.seed = a.seed;
  o.batch = a.batch;
  o.early_stopping = a.early_stopping;
  o.remeasure_rounds = a.remeasure_rounds;
  o.measure.threads = a.threads;
  o.measure.repeat = a.repeat;  // raised per candidate on several threads (measure/repeats.h)
  o.measure.min_repeat_ms = a.min_repeat_ms;
  o.measure.timeout_s = a.timeout_s;
  o.build_timeout_s = a.build_timeout_s;
  o.predict = a.runner == "analyze";
  // The embedded farm's workers time kernels on the cores the compiler would use.
  o.overlap_builds = a.overlap_builds == "auto" ? !a.farm.empty() : a.overlap_builds == "on";
  return o;
}

std::unique_ptr<tuner::Runner> make_runner(const TuneArgs& a, const Target& target,
                                           std::unique_ptr<tuner::EmbeddedFarm>& embedded) {
  if (a.runner == "analyze") {
    user_check(a.farm.empty() && a.builders == 0 && a.layout_choices == 1)
        << "--runner analyze predicts every time here: drop --farm, --builders and "
           "--layout-choices";
    // Before any trial: llvm-mca must run, or every candidate would fail alike.
    codegen::check_llvm_mca(target);
    return std::make_unique<tuner::PredictedRunner>();
  }
  user_check(a.builders == 0 || a.farm.empty())
      << "--builders starts builders in the embedded farm; with --farm, start them on the farm "
         "(kiln worker --role builder --key KEY) and give --build-key KEY";
  user_check(a.build_key.empty() || !a.farm.empty())
      << "--build-key needs --farm (without one, --builders N starts builders here)";
  if (!a.farm.empty()) {
    const std::string token = as_user_error([&] { return farm::load_token(a.token_file); });
    return std::make_unique<tuner::FarmRunner>(a.farm, token, a.key, a.tls_ca);
  }
  // One worker per `--threads` cores: two workers timing 2-thread kernels on a 2-core machine
  // put four threads on two cores, and every parallel kernel measured that way waits on a
  // descheduled thread.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = a.workers > 0 ? a.workers : std::max(1, cores / std::max(1, a.threads));
  embedded = std::make_unique<tuner::EmbeddedFarm>(target, workers, a.builders);
  return embedded->runner();
}

std::shared_ptr<tuner::FarmBuilders> make_builders(const TuneArgs& a,
                                                   const tuner::EmbeddedFarm* embedded) {
  if (!a.build_key.empty()) {
    const std::string token = as_user_error([&] { return farm::load_token(a.token_file); });
    return std::make_shared<tuner::FarmBuilders>(a.farm, token, a.build_key, a.tls_ca);
  }
  return embedded ? embedded->builders() : nullptr;
}

std::vector<tuner::TuningRecord> load_log(const std::string& path, const Target& target) {
  tuner::LoadOptions lo;
  lo.target = target;
  tuner::LoadedRecords history;
  if (std::filesystem::exists(path)) history = tuner::load_records({path}, lo);
  for (const tuner::RecordProblem& p : history.problems)
    std::fprintf(stderr, "kiln tune: skipping %s\n", p.str().c_str());
  return std::move(history.records);
}

void print_progress(size_t task, size_t tasks, const tuner::TuneStatus& s, const std::string& extra) {
  static const bool tty = isatty(2);
  std::fprintf(stderr, "%s[Task %2zu/%2zu] Current/Best: %7.1f/%7.1f GFLOPS | Progress: (%zu/%zu) | %.1f s%s%s",
               tty ? "\r" : "", task, tasks, s.last_gflops, s.best_gflops, s.trials, s.budget,
               s.elapsed_s, extra.c_str(), tty ? "" : "\n");
  std::fflush(stderr);
}

std::unique_ptr<tuner::RecordWriter> open_log(const std::string& path) {
  auto log = std::make_unique<tuner::RecordWriter>(path);
  if (log->repaired_tail())
    std::fprintf(stderr, "kiln tune: %s (cut off)\n", log->repaired_tail()->str().c_str());
  return log;
}

void end_progress_line() {
  if (isatty(2)) std::fputc('\n', stderr);
}

}  // namespace kiln::tools
