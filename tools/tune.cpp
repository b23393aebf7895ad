// `kiln tune`: tunes one operator on a device farm and appends every measurement to a log.
//
//   kiln tune --op dense --shape 1024,1024,1024 --target x86-avx512 --trials 200 --log d.jsonl
//   kiln tune --op conv2d --shape 1,64,56,56,64,3,3 --pad 1 --tuner ga --farm 10.0.0.5:9190
//             --key rk3588 --token-file farm.token --trials 1000 --log c.jsonl
//
// Without --farm an embedded farm runs on loopback (a tracker and workers for the target:
// native processes, or AArch64 workers under qemu). Ctrl-C stops after the batch in flight
// is cancelled, with the log intact; running the same command again resumes from the log.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include "compiler/base/error.h"
#include "schedules/registry.h"
#include "schedules/validate.h"
#include "tools/farm_args.h"
#include "tools/subcommands.h"
#include "tools/workload_args.h"
#include "rpc/farm/transport.h"
#include "tuner/embedded_farm.h"
#include "tuner/records.h"
#include "tuner/task_tuner.h"
#include "tuner/transfer.h"

namespace kiln::tools {
namespace {

std::atomic<bool> g_stop = false;

void on_interrupt(int) {
  if (g_stop) _exit(130);  // a second Ctrl-C: the user means it
  g_stop = true;
}

struct TuneArgs {
  WorkloadArgs workload;
  std::string target = "host", tmpl, tuner = "xgb", log, features = "ir";
  std::string farm, key, token_file, tls_ca;
  std::vector<std::string> transfer;
  size_t trials = 100, batch = 16, early_stopping = 0;
  uint64_t seed = 0;
  int threads = 1, workers = 0, repeat = 3;
  double min_repeat_ms = 20, timeout_s = 10;
  bool quiet = false;
};

// One progress line as AutoTVM prints it, refreshed in place on a terminal.
class Progress {
 public:
  Progress(bool quiet, size_t task, size_t tasks) : quiet_(quiet), task_(task), tasks_(tasks) {}
  void operator()(const tuner::TuneStatus& s) {
    if (quiet_) return;
    std::fprintf(stderr, "%s[Task %2zu/%2zu] Current/Best: %7.1f/%7.1f GFLOPS | Progress: (%zu/%zu) | %.1f s%s",
                 tty_ ? "\r" : "", task_, tasks_, s.last_gflops, s.best_gflops, s.trials, s.budget,
                 s.elapsed_s, tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void done() {
    if (!quiet_ && tty_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_, tty_ = isatty(2);
  size_t task_, tasks_;
};

int run_tune(const TuneArgs& a) {
  schedules::Workload w = make_workload(a.workload);
  Target target = target_from_name(a.target);
  const schedules::OpTemplate& tpl = pick_template(w, target, a.tmpl);
  schedules::check_memory_for_run(tpl, w, schedules::available_memory_bytes());
  user_check(!a.log.empty()) << "--log is required: every measurement is appended to it";
  user_check(a.trials > 0) << "--trials must be positive";
  user_check(a.farm.empty() || !a.key.empty())
      << "--farm needs --key (the device key of the boards to use)";

  // Resume: this task's records in the log are never measured again.
  tuner::LoadOptions lo;
  lo.target = target;
  tuner::LoadedRecords history;
  if (std::filesystem::exists(a.log)) history = tuner::load_records({a.log}, lo);
  for (const tuner::RecordProblem& p : history.problems)
    std::fprintf(stderr, "kiln tune: skipping %s\n", p.str().c_str());
  std::vector<tuner::TuningRecord> mine;
  for (const tuner::TuningRecord& r : history.records)
    if (r.template_name == tpl.name() && r.workload.str() == w.str()) mine.push_back(r);
  tuner::RecordWriter log(a.log);
  if (log.repaired_tail())
    std::fprintf(stderr, "kiln tune: %s (cut off)\n", log.repaired_tail()->str().c_str());

  tuner::TuneOptions o;
  o.search = a.tuner;
  o.features = a.features;
  o.seed = a.seed;
  o.batch = a.batch;
  o.early_stopping = a.early_stopping;
  o.measure.threads = a.threads;
  o.measure.repeat = a.threads > 1 ? std::max(a.repeat, 3 * a.repeat) : a.repeat;
  o.measure.min_repeat_ms = a.min_repeat_ms;
  o.measure.timeout_s = a.timeout_s;
  if (!a.transfer.empty()) o.prior = tuner::transfer_samples(a.transfer, tpl, a.features);
  tuner::TuneTask task{&tpl, w, target};
  tuner::TaskTuner tuner(task, o, mine);

  // The runner: the farm given, or one embedded for this run.
  std::unique_ptr<tuner::EmbeddedFarm> embedded;
  std::unique_ptr<tuner::Runner> runner;
  if (!a.farm.empty()) {
    const std::string token = as_user_error([&] { return farm::load_token(a.token_file); });
    runner = std::make_unique<tuner::FarmRunner>(a.farm, token, a.key, a.tls_ca);
  } else {
    embedded = std::make_unique<tuner::EmbeddedFarm>(target, a.workers);
    runner = embedded->runner();
  }
  if (!a.quiet)
    std::fprintf(stderr, "kiln tune: %s, %s search over %llu configs, %zu trials%s on %s\n",
                 task.str().c_str(), a.tuner.c_str(),
                 static_cast<unsigned long long>(tuner.space_size()), a.trials,
                 mine.empty() ? "" : (" (resuming after " + std::to_string(mine.size()) + ")").c_str(),
                 embedded ? embedded->description().c_str() : a.farm.c_str());

  signal(SIGINT, on_interrupt);
  signal(SIGTERM, on_interrupt);
  Progress progress(a.quiet, 1, 1);
  tuner.tune(a.trials, *runner, log, g_stop, std::ref(progress));
  progress.done();
  if (!g_stop) tuner.remeasure_best(*runner, log, g_stop);
  if (const cost_model::CostModel* m = tuner.model(); m && m->trained())
    m->save(a.log + ".xgb");

  const auto& best = tuner.best();
  if (g_stop) std::fprintf(stderr, "kiln tune: stopped; %s holds every measurement so far\n", a.log.c_str());
  if (!best) {
    std::fprintf(stderr, "kiln tune: no config of %s ran correctly\n", task.str().c_str());
    return 1;
  }
  std::printf("best: %.1f GFLOPS (%.4f ms) config %s\n", best->gflops(),
              best->result.mean_cost() * 1e3, best->config.to_json().c_str());
  return g_stop ? 130 : 0;
}

}  // namespace

Run add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Tune an operator's schedule on a device farm");
  auto a = std::make_shared<TuneArgs>();
  add_workload_options(*cmd, a->workload);
  cmd->add_option("--target", a->target, "Target preset")->capture_default_str();
  cmd->add_option("--template", a->tmpl, "Template name (default: the first that applies)");
  cmd->add_option("--trials", a->trials, "Configs to measure")->check(CLI::Range(1, 100000000))->capture_default_str();
  cmd->add_option("--tuner", a->tuner, "Search: xgb, ga, random or grid")
      ->check(CLI::IsMember({"xgb", "ga", "random", "grid"}))
      ->capture_default_str();
  cmd->add_option("--features", a->features, "Cost model features: ir or knob")
      ->check(CLI::IsMember({"ir", "knob"}))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed of the search")->check(CLI::Range(int64_t{0}, INT64_MAX))->capture_default_str();
  cmd->add_option("--log", a->log, "Records file (JSON lines), appended and resumed from")->required();
  cmd->add_option("--transfer", a->transfer, "Earlier logs to pre-train the cost model on");
  cmd->add_option("--batch", a->batch, "Candidates per batch")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--early-stopping", a->early_stopping, "Stop after N trials without improvement (0: never)")->check(CLI::Range(int64_t{0}, INT64_MAX));
  cmd->add_option("--threads", a->threads, "Threads of each kernel")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--repeat", a->repeat, "Timed repeats per candidate")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--min-repeat-ms", a->min_repeat_ms, "Each repeat lasts at least this long")->check(CLI::Range(0.0, 10000.0))->capture_default_str();
  cmd->add_option("--timeout", a->timeout_s, "Seconds a candidate may run")->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  cmd->add_option("--farm", a->farm, "Tracker (or direct-mode worker) HOST:PORT; default: an embedded farm");
  cmd->add_option("--key", a->key, "Device key of the farm's boards");
  cmd->add_option("--token-file", a->token_file, "Farm token file (or KILN_FARM_TOKEN)");
  cmd->add_option("--tls-ca", a->tls_ca, "PEM root certificate of a TLS tracker");
  cmd->add_option("--workers", a->workers, "Embedded farm: workers (default: one per core)")->check(CLI::Range(0, 256));
  cmd->add_flag("--quiet", a->quiet, "No progress output");
  return [a] { return run_tune(*a); };
}

}  // namespace kiln::tools
