#include "tuner/task_tuner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <numeric>
#include <random>
#include <thread>

#include "compiler/base/error.h"
#include "cost_model/ir_features.h"
#include "cost_model/knob_features.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/machine.h"
#include "runtime/process/temp_dir.h"
#include "tuner/builder.h"
#include "tuner/history_best.h"
#include "tuner/isolated_compile.h"
#include "tuner/predict.h"
#include "tuner/measure/farm_builders.h"
#include "tuner/search/xgb_score_model.h"

namespace kiln::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Where a predicted record's time comes from, as records name the machine that measured.
MeasuredOn predicted_on(const Target& t) {
  MeasuredOn on;
  on.vendor = "predicted";
  on.model = "by llvm-mca with the " + codegen::scheduling_model_cpu(t) + " model";
  on.threads = 1;
  on.kiln = kiln_version();
  return on;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A config built (or not) for measurement.
struct Candidate {
  uint64_t index = 0;
  schedules::Config config;
  std::optional<BuiltKernel> kernel;
  std::vector<uint8_t> so;
  double predicted_s = 0;  // TuneOptions::predict: the predicted time per call
  MeasureErrorKind error = MeasureErrorKind::Ok;
  std::string message;
  double build_s = 0;
};

}  // namespace

MeasureCallback append_to(RecordWriter& log) {
  return [&log](const TaskTuner&, const std::vector<TuningRecord>& records) {
    log.append(records);
  };
}

MeasureCallback report_progress(ProgressFn progress) {
  return [progress = std::move(progress)](const TaskTuner& tuner, const std::vector<TuningRecord>&) {
    if (progress) progress(tuner.status());
  };
}

std::string TuneTask::str() const {
  return tpl->name() + " " + workload.str() + " on " + target.name;
}

struct TaskTuner::Impl {
  // The best few correct configs so far: (cost, index), for the final re-measurement.
  std::vector<std::pair<double, uint64_t>> top;
  void note_correct(double cost, uint64_t index) {
    for (const auto& [c, i] : top)
      if (i == index) return;
    top.emplace_back(cost, index);
    std::sort(top.begin(), top.end());
    if (top.size() > std::max<size_t>(1, options.remeasure_top)) top.pop_back();
  }
  TuningRecord record_of(const Candidate& c, const std::string& device) const;
  // The machine a result came from, with the threads the kernel was given.
  MeasuredOn measured_on(const RunResult& r) const {
    MeasuredOn on = r.machine;
    if (on.known()) on.threads = std::max<uint32_t>(1, options.measure.threads);
    return on;
  }
  TuneTask task;
  TuneOptions options;
  schedules::ConfigSpace space;
  std::unique_ptr<SearchStrategy> search;
  std::shared_ptr<XgbScoreModel> model;
  TaskData data;
  double rtol;
  std::vector<uint64_t> first;  // TuneTask::first's points not measured yet
  size_t since_best = 0;  // trials since the best improved (early stopping)
  bool exhausted = false, stopped_early = false;
  std::future<std::vector<Candidate>> next;  // the batch being built while one is measured

  Impl(const TuneTask& t, TuneOptions o)
      : task(t),
        options(std::move(o)),
        space(t.tpl->space(t.workload, t.target).pinned(t.pinned)),
        data(*t.tpl, t.workload),
        rtol(options.rtol > 0 ? options.rtol
                             : tolerance(task.workload.dtype) *
                                   t.tpl->tolerance_scale(t.workload)) {}

  // Builds the configs at `indices` on every core: lower + codegen + link, each failure
  // recorded as its kind.
  std::vector<Candidate> build(const TuneTask& task, const std::vector<uint64_t>& indices) const {
    std::vector<Candidate> out(indices.size());
    std::atomic<size_t> next_i = 0;
    unsigned threads = options.build_threads ? options.build_threads
                                             : std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<unsigned>(threads, std::max<size_t>(1, indices.size()));
    auto worker = [&] {
      for (size_t i; (i = next_i++) < indices.size();) {
        Candidate& c = out[i];
        c.index = indices[i];
        c.config = space.at(c.index);
        const auto t0 = Clock::now();
        try {
          c.kernel = lower_template(*task.tpl, task.workload, task.target, c.config,
                                    "kernel_" + std::to_string(c.index));
        } catch (const std::exception& e) {
          c.error = MeasureErrorKind::InstantiationError;
          c.message = e.what();
          continue;
        }
        // Lowering runs here (the candidate's kernel description is needed to measure it);
        // code generation, where a candidate can take minutes, runs in a child process
        // killed at the deadline (tuner/isolated_compile.h).
        const double left_s = options.build_timeout_s - seconds_since(t0);
        if (options.builders) {  // compiled below, on the farm's builders
          c.build_s = seconds_since(t0);
          continue;
        }
        if (left_s <= 0) {
          c.error = MeasureErrorKind::CompileTimeout;
          c.message = "lowering alone took longer than the build timeout (" +
                      std::to_string(options.build_timeout_s) + " s)";
        } else if (options.predict) {
          double cycles = 0;
          IsolatedCompile predicted = predict_isolated(*c.kernel, task.target, left_s, &cycles);
          c.error = predicted.error;
          c.message = predicted.message;
          c.predicted_s = cycles / (prediction_ghz(task.target) * 1e9);
        } else {
          TempDir dir("kiln-build");
          const std::string so = dir.file("candidate.so");
          IsolatedCompile built = compile_isolated(c.kernel->func, task.target, so, left_s);
          c.error = built.error;
          c.message = built.message;
          if (c.error == MeasureErrorKind::Ok) c.so = read_file_bytes<Bytes>(so);
        }
        c.build_s = seconds_since(t0);
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
    if (options.builders) build_on_builders(task, out);
    return out;
  }

  // The candidates lowered above, compiled on the farm's builders; a build's wall time is
  // shared out over the batch, as a measurement's is.
  void build_on_builders(const TuneTask& task, std::vector<Candidate>& batch) const {
    std::vector<BuildInput> inputs;
    std::vector<Candidate*> sent;
    for (Candidate& c : batch) {
      if (c.error != MeasureErrorKind::Ok) continue;
      TuningRecord r;
      r.target = task.target;
      r.template_name = task.tpl->name();
      r.workload = task.workload;
      r.config = c.config;
      r.result.error = MeasureErrorKind::Cancelled;  // not measured: only what to build
      inputs.push_back({std::move(r), "kernel_" + std::to_string(c.index)});
      sent.push_back(&c);
    }
    const auto t0 = Clock::now();
    const std::atomic<bool> never = false;
    std::vector<BuildOutput> built = options.builders->build(inputs, options.build_timeout_s, never);
    const double share = seconds_since(t0) / std::max<size_t>(1, sent.size());
    for (size_t i = 0; i < sent.size(); ++i) {
      sent[i]->error = built[i].error;
      sent[i]->message = built[i].message;
      sent[i]->so = std::move(built[i].so);
      sent[i]->build_s += share;
    }
  }
};

TuningRecord TaskTuner::Impl::record_of(const Candidate& c, const std::string& device) const {
  TuningRecord r;
  r.target = task.target;
  r.template_name = task.tpl->name();
  r.workload = task.workload;
  r.config = c.config;
  r.flops = c.kernel ? c.kernel->flops : 0;
  r.result.error = c.error;
  r.result.message = c.message;
  r.result.device_key = device;
  r.result.timestamp = unix_now();
  return r;
}

TaskTuner::TaskTuner(TuneTask task, TuneOptions options, const std::vector<TuningRecord>& history)
    : task_(std::move(task)) {
  impl_ = std::make_unique<Impl>(task_, std::move(options));
  Impl& m = *impl_;
  SpaceGrid grid(m.space);
  FeatureFn features;
  if (m.options.search == "xgb") {
    cost_model::CostModelOptions mo;
    mo.seed = m.options.seed;
    m.model = !m.options.initial_model.empty() && std::filesystem::exists(m.options.initial_model)
                  ? std::make_shared<XgbScoreModel>(cost_model::CostModel::load(m.options.initial_model, mo))
                  : std::make_shared<XgbScoreModel>(mo);
    const TuneTask t = task_;
    const schedules::ConfigSpace space = m.space;
    if (m.options.features == "knob") {
      features = [space](uint64_t i) { return cost_model::knob_features(space, space.at(i)); };
    } else {
      user_check(m.options.features == "ir")
          << "unknown feature set '" << m.options.features << "' (valid: ir, knob)";
      features = [t, space](uint64_t i) {
        const BuiltKernel k = lower_template(*t.tpl, t.workload, t.target, space.at(i), "features");
        return cost_model::ir_features(with_sizes_of(k, t.workload));
      };
    }
  }
  ModelSearchOptions so;
  so.min_samples = std::max<size_t>(m.options.batch, 8);
  m.search = make_search(m.options.search, grid, m.options.seed, m.model, features, so,
                         m.options.prior);
  // Resume: what the log measured is learned from and never proposed again.
  std::vector<Measured> measured;
  std::vector<TuningRecord> usable;
  for (TuningRecord r : history) {
    r.config = m.space.with_defaults(r.config);  // an older log's config in today's space
    if (!m.space.contains(r.config)) continue;
    const uint64_t index = m.space.index_of(r.config);
    measured.push_back({index, r.gflops()});
    if (r.result.ok()) m.note_correct(r.result.cost(), index);
    usable.push_back(std::move(r));
  }
  // The running best (progress line, the scheduler's weights) is what apply-history-best
  // would deploy from the log: where an earlier run re-measured its best few, those figures,
  // not the luckiest trial.
  for (const TuningRecord& r : settle_records(usable))
    if (r.result.ok() && (!best_ || r.result.cost() < best_->result.cost())) best_ = r;
  m.search->update(measured);
  if (best_) status_.best_gflops = best_->gflops();
  for (const schedules::Config& c : task_.first)
    if (m.space.contains(c) && m.search->claim(m.space.index_of(c)))
      m.first.push_back(m.space.index_of(c));
}

TaskTuner::~TaskTuner() {
  if (impl_ && impl_->next.valid()) impl_->next.wait();
}

size_t TaskTuner::space_size() const {
  return impl_->space.size();
}

bool TaskTuner::finished() const {
  return impl_->exhausted || impl_->stopped_early;
}

void TaskTuner::set_prior(PriorSamples prior) {
  impl_->search->set_prior(std::move(prior));
}

const cost_model::CostModel* TaskTuner::model() const {
  return impl_->model ? &impl_->model->model() : nullptr;
}

void TaskTuner::tune(size_t trials, Runner& runner, const MeasureCallbacks& callbacks,
                     const std::atomic<bool>& stop) {
  Impl& m = *impl_;
  const auto t0 = Clock::now();
  const double elapsed_before = status_.elapsed_s;
  status_.budget += trials;
  size_t done = 0;
  auto start_build = [&](size_t n) {
    std::vector<uint64_t> indices;
    while (!m.first.empty() && indices.size() < n) {
      indices.push_back(m.first.front());
      m.first.erase(m.first.begin());
    }
    if (indices.size() < n) {
      std::vector<uint64_t> proposed = m.search->next_batch(n - indices.size());
      indices.insert(indices.end(), proposed.begin(), proposed.end());
    }
    if (indices.empty()) {
      m.exhausted = true;
      return;
    }
    m.next = std::async(std::launch::async, [this, indices] { return impl_->build(task_, indices); });
  };
  if (!m.next.valid()) start_build(std::min(m.options.batch, trials));
  while (done < trials && !stop && m.next.valid()) {
    std::vector<Candidate> batch = m.next.get();
    done += batch.size();
    // The next batch: built while this one is measured when the devices are other machines
    // (AutoTVM's pipelining: the model has not seen this batch yet, but the devices stay
    // busy), else after this batch is measured and learned (TuneOptions::overlap_builds).
    const bool overlap = m.options.overlap_builds;
    auto build_next = [&] { start_build(std::min(m.options.batch, trials - done)); };
    if (overlap && done < trials && !m.stopped_early) build_next();

    std::vector<MeasureInput> inputs;
    std::vector<size_t> input_of;  // candidate -> input index, or npos when it did not build
    for (Candidate& c : batch) {
      input_of.push_back(inputs.size());
      if (c.error != MeasureErrorKind::Ok || m.options.predict) {
        input_of.back() = SIZE_MAX;
        continue;
      }
      try {
        inputs.push_back(make_input(*c.kernel, c.so, m.data, m.options.measure));
      } catch (const std::exception& e) {
        c.error = MeasureErrorKind::InstantiationError;
        c.message = e.what();
        input_of.back() = SIZE_MAX;
      }
    }
    const auto run_t0 = Clock::now();
    std::vector<RunResult> results;
    if (!m.options.predict) results = runner.run(std::move(inputs), nullptr, stop);
    const double run_s = seconds_since(run_t0);

    std::vector<TuningRecord> records;
    std::vector<Measured> learned;
    double batch_best = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      Candidate& c = batch[i];
      TuningRecord r = m.record_of(c, m.options.predict ? "llvm-mca" : runner.device());
      r.result.all_cost = c.build_s + run_s / std::max<size_t>(1, batch.size());
      if (input_of[i] != SIZE_MAX) {
        Judgement j = judge(results[input_of[i]], *c.kernel, m.data, m.rtol);
        r.result.error = j.error;
        r.result.message = j.message;
        r.result.costs = j.costs;
        r.result.measured_on = m.measured_on(results[input_of[i]]);
      } else if (m.options.predict && c.error == MeasureErrorKind::Ok) {
        r.result.costs = {c.predicted_s};
        r.result.measured_on = predicted_on(task_.target);
      }
      if (r.result.error == MeasureErrorKind::Cancelled) continue;  // never ran: not a result
      const double g = r.gflops();
      if (!r.result.ok()) ++status_.errors;
      batch_best = std::max(batch_best, g);
      if (r.result.ok()) m.note_correct(r.result.cost(), c.index);
      if (r.result.ok() && (!best_ || r.result.cost() < best_->result.cost())) {
        best_ = r;
        m.since_best = 0;
      } else {
        ++m.since_best;
      }
      curve_.push_back(best_ ? best_->gflops() : 0);
      learned.push_back({c.index, g});
      records.push_back(std::move(r));
    }
    m.search->update(learned);
    status_.trials += records.size();
    status_.last_gflops = batch_best;
    status_.best_gflops = best_ ? best_->gflops() : 0;
    status_.elapsed_s = elapsed_before + seconds_since(t0);
    for (const MeasureCallback& callback : callbacks) callback(*this, records);
    if (m.options.early_stopping && m.since_best >= m.options.early_stopping) {
      m.stopped_early = true;
      break;
    }
    if (!overlap && done < trials && !stop) build_next();
  }
  // A batch still being built stays for the next call (a scheduler hands out trials in
  // slices); its configs were never measured, so a resumed run proposes them again.
}

void TaskTuner::remeasure_best(Runner& runner, const MeasureCallbacks& callbacks,
                               const std::atomic<bool>& stop) {
  Impl& m = *impl_;
  // A prediction is the same every time: nothing to re-measure.
  if (m.options.remeasure_top == 0 || m.top.empty() || stop || m.options.predict) return;
  // The best few, measured again side by side: one lucky timing in a noisy batch should
  // not decide what gets deployed.
  std::vector<uint64_t> indices;
  for (const auto& [cost, index] : m.top) indices.push_back(index);
  // And the configs measured first (a network's untuned kernel): the re-measurement decides
  // what is deployed (settle_records), so the kernel to beat is timed in the same batch.
  for (const schedules::Config& c : task_.first) {
    if (!m.space.contains(c)) continue;
    const uint64_t index = m.space.index_of(c);
    if (std::find(indices.begin(), indices.end(), index) == indices.end()) indices.push_back(index);
  }
  std::vector<Candidate> batch = m.build(task_, indices);
  std::vector<Candidate*> built;
  for (Candidate& c : batch)
    if (c.error == MeasureErrorKind::Ok) built.push_back(&c);
  // In rounds, each in a new order and each job a new process: a shared machine's slow
  // spells last from tens of milliseconds to seconds (bench/README.md), so repeats spread
  // over rounds reach each config's floor where as many in one process may all fall in a
  // spell. A config's record holds every round's repeats; a round that fails decides.
  MeasureOptions o = m.options.measure;
  o.repeat = std::max<uint32_t>(o.repeat, 3);
  std::vector<Judgement> judged(built.size());
  std::vector<MeasuredOn> machines(built.size());
  std::vector<size_t> order(built.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(m.options.seed ^ 0x9e3779b97f4a7c15ull);
  const uint32_t rounds = std::max<uint32_t>(1, m.options.remeasure_rounds);
  for (uint32_t round = 0; round < rounds && !stop; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<MeasureInput> inputs;
    for (size_t i : order) inputs.push_back(make_input(*built[i]->kernel, built[i]->so, m.data, o));
    std::vector<RunResult> results = runner.run(std::move(inputs), nullptr, stop);
    for (size_t k = 0; k < order.size(); ++k) {
      Judgement& total = judged[order[k]];
      if (round > 0 && !total.correct) continue;  // failed in an earlier round
      Judgement j = judge(results[k], *built[order[k]]->kernel, m.data, m.rtol);
      if (round > 0 && j.error == MeasureErrorKind::Cancelled) continue;  // stopped: keep the rounds run
      if (results[k].machine.known()) machines[order[k]] = m.measured_on(results[k]);
      j.costs.insert(j.costs.begin(), total.costs.begin(), total.costs.end());
      total = std::move(j);
    }
  }
  std::vector<TuningRecord> records;
  std::optional<TuningRecord> best;
  for (size_t i = 0; i < built.size(); ++i) {
    const Judgement& j = judged[i];
    TuningRecord r = m.record_of(*built[i], runner.device());
    r.result.error = j.error;
    r.result.message = j.correct ? kRemeasured : j.message;
    r.result.costs = j.costs;
    r.result.measured_on = machines[i];
    if (r.result.error == MeasureErrorKind::Cancelled) continue;
    if (r.result.ok() && (!best || r.result.cost() < best->result.cost())) best = r;
    records.push_back(std::move(r));
  }
  if (best) {
    best_ = best;
    status_.best_gflops = best->gflops();
  }
  for (const MeasureCallback& callback : callbacks) callback(*this, records);
}

}  // namespace kiln::tuner
