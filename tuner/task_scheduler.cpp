#include "tuner/task_scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "compiler/base/error.h"

namespace kiln::tuner {

TaskScheduler::TaskScheduler(std::vector<ScheduledTask> tasks, SchedulerOptions options)
    : tasks_(std::move(tasks)), options_(options), state_(tasks_.size()) {
  internal_check(options_.slice > 0) << "a scheduler slice must hold at least one trial";
  if (options_.warmup == 0) options_.warmup = options_.slice;
  options_.window = std::max<size_t>(1, options_.window);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    state_[i].trials = tasks_[i].trials;
    state_[i].best = tasks_[i].best_cost_s;
    // Resumed trials count as the rounds they would have taken, for the forward estimate.
    state_[i].rounds = (tasks_[i].trials + options_.slice - 1) / options_.slice;
  }
}

size_t TaskScheduler::total_trials() const {
  size_t n = 0;
  for (const State& s : state_) n += s.trials;
  return n;
}

double TaskScheduler::others_best(size_t task) const {
  double best = INFINITY;
  const std::string& key = tasks_[task].alternatives;
  if (key.empty()) return best;
  for (size_t j = 0; j < tasks_.size(); ++j)
    if (j != task && tasks_[j].alternatives == key && state_[j].best > 0)
      best = std::min(best, state_[j].best);
  return best;
}

double TaskScheduler::estimated_latency_s(bool* complete) const {
  // Each workload once, weighted by its calls, at the best time of its alternatives.
  std::map<std::string, std::pair<double, double>> workloads;  // key -> (weight, best or inf)
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const std::string key = tasks_[i].alternatives.empty() ? "#" + std::to_string(i)
                                                           : "=" + tasks_[i].alternatives;
    auto [it, inserted] = workloads.try_emplace(key, tasks_[i].weight, INFINITY);
    if (state_[i].best > 0) it->second.second = std::min(it->second.second, state_[i].best);
  }
  double sum = 0;
  bool all = true;
  for (const auto& [key, w] : workloads) {
    if (std::isfinite(w.second))
      sum += w.first * w.second;
    else
      all = false;
  }
  if (complete) *complete = all;
  return sum;
}

size_t TaskScheduler::slice_for(size_t task) const {
  const State& s = state_[task];
  size_t n = s.rounds == 0 ? options_.warmup : options_.slice;
  const size_t used = total_trials();
  if (options_.trials > 0) n = std::min(n, options_.trials > used ? options_.trials - used : 0);
  return n;
}

// A task with no correct config yet counts as ten times the slowest task that has one: slow
// enough to be worth trials, bounded so that it cannot starve every other task.
double TaskScheduler::cost_or_penalty(size_t task) const {
  if (state_[task].best > 0) return state_[task].best;
  double worst = 0;
  for (const State& s : state_) worst = std::max(worst, s.best);
  return worst > 0 ? 10 * worst : 1.0;
}

double TaskScheduler::gradient(size_t i) const {
  const State& s = state_[i];
  const double best = cost_or_penalty(i);
  const double others = others_best(i);
  // A template far behind another template of the same workload after its warm-up (a general
  // conv on a depthwise workload, 100x slower than the depthwise template) would have to beat
  // it many times over before the network gained anything; the group estimate below would
  // still call it promising, since its group runs fast on other workloads. Its trials go
  // elsewhere.
  constexpr double kFarBehind = 4;
  if (s.rounds > 0 && s.best > 0 && std::isfinite(others) && s.best > kFarBehind * others) return 0;
  // Backward: the improvement per slice over the last `window` slices of this run.
  double backward = 0;
  const size_t w = options_.window;
  if (s.history.size() > w && s.best > 0 && s.best <= others) {
    const double now = s.history.back(), then = s.history[s.history.size() - 1 - w];
    if (now > 0 && then > 0) backward = std::min(0.0, (now - then) / double(w));
  }
  // Forward: the curve goes on improving as it has on average, or the task reaches beta x
  // the best throughput of its group, whichever is more optimistic.
  double next = best - best / double(std::max<size_t>(1, s.rounds));
  const ScheduledTask& t = tasks_[i];
  if (!t.group.empty() && t.flops > 0) {
    double rate = 0;  // the group's best FLOPS per second
    size_t members = 0;
    for (size_t j = 0; j < tasks_.size(); ++j) {
      if (tasks_[j].group != t.group) continue;
      ++members;
      if (state_[j].best > 0 && tasks_[j].flops > 0)
        rate = std::max(rate, tasks_[j].flops / state_[j].best);
    }
    if (members > 1 && rate > 0) next = std::min(next, options_.beta * t.flops / rate);
  }
  const double forward = std::min(0.0, std::min(next, others) - std::min(best, others));
  // The chain rule: the network's latency moves by weight x the task's time.
  return t.weight * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

size_t TaskScheduler::pick() const {
  std::vector<size_t> open;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (!state_[i].finished) open.push_back(i);
  if (open.empty()) return npos;
  // Warm-up: every task gets a slice before any gets a second.
  for (size_t i : open)
    if (state_[i].rounds == 0) return i;
  std::vector<double> g;
  for (size_t i : open) g.push_back(gradient(i));
  const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
  if (*lo < *hi) return open[lo - g.begin()];
  // No task stands out: round-robin after the latest one.
  for (size_t i : open)
    if (last_ == npos || i > last_) return i;
  return open.front();
}

void TaskScheduler::record(size_t task, const SliceResult& r) {
  State& s = state_[task];
  s.trials += r.measured;
  ++s.rounds;
  if (r.best_cost_s > 0) s.best = r.best_cost_s;
  s.history.push_back(s.best);
  s.finished = r.finished || r.measured == 0;
  last_ = task;
}

void TaskScheduler::run(const TuneSliceFn& tune, const std::atomic<bool>& stop) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!stop) {
    if (options_.trials > 0 && total_trials() >= options_.trials) break;
    if (options_.time_budget_s > 0 && elapsed_s() >= options_.time_budget_s) break;
    const size_t task = pick();
    if (task == npos) break;
    const size_t n = slice_for(task);
    if (n == 0) break;
    const SliceResult r = tune(task, n);
    if (stop) {  // an interrupted slice says nothing about the task
      state_[task].trials += r.measured;
      break;
    }
    record(task, r);
  }
}

}  // namespace kiln::tuner
