// The task scheduler of a network tune (Ansor's gradient-based task scheduler, as TVM's
// auto_scheduler.TaskScheduler): hands the trial budget out a slice at a time to whichever
// task shortens the network's estimated latency most.
//
// The network's latency is estimated as the sum over tasks of weight (the calls of the task
// in the network) x the task's best time; tasks that are alternatives (several templates of
// one workload) count once, with the best time among them. After a round-robin warm-up (every task gets one
// slice, so each has a time), each next slice goes to the task with the most negative
// gradient of that estimate:
//   weight_i x (alpha x backward_i + (1 - alpha) x forward_i)
// where backward_i is the task's improvement per slice over its last `window` slices and
// forward_i an optimistic guess of the next slice's improvement: the smaller of best_i/rounds_i
// (the curve keeps improving as it did on average) and, when other tasks of its group (one
// template: comparable throughput) run faster, the time it would take at `beta` x their best
// FLOPS rate. For one of several alternatives, only what would beat the other alternatives'
// best counts, and its own past improvement only while it is the best of them. Equal
// gradients fall back to round-robin.
//
// A task leaves the schedule when it reports itself finished (space exhausted, early
// stopping) or measures nothing. The run ends when the trial budget is spent, the time
// budget is over, every task finished, or `stop` is set.
//
// The scheduler knows nothing of measuring: it calls a function that tunes task i for n
// trials and reports back, so its allocation is testable without a device.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kiln::tuner {

struct ScheduledTask {
  double weight = 1;      // calls of the task in the network
  double flops = 0;       // per call (0: unknown), for the forward estimate within a group
  std::string group;      // tasks of one template; "" is a group of its own
  std::string alternatives;  // tasks computing one workload; "" is a workload of its own
  size_t trials = 0;      // already measured (a resumed log)
  double best_cost_s = 0; // the best time so far (0: none yet)
};

struct SchedulerOptions {
  size_t trials = 0;          // total budget, resumed trials included
  double time_budget_s = 0;   // of this run (0: none)
  size_t slice = 16;          // trials per pick (one batch of the tuner)
  size_t warmup = 0;          // trials of each task's warm-up slice (0: `slice`)
  size_t window = 3;          // slices of the backward-looking improvement
  double alpha = 0.2;         // weight of the backward-looking term
  double beta = 2;            // optimism of the group-based forward estimate
};

// What one slice of a task did.
struct SliceResult {
  size_t measured = 0;      // trials measured (0: nothing left to measure)
  double best_cost_s = 0;   // the task's best time after it (0: none yet)
  bool finished = false;    // space exhausted or stopped early: never picked again
};

using TuneSliceFn = std::function<SliceResult(size_t task, size_t trials)>;

class TaskScheduler {
 public:
  TaskScheduler(std::vector<ScheduledTask> tasks, SchedulerOptions options);

  // Hands out slices until a budget is spent, every task finished or `stop` is set.
  void run(const TuneSliceFn& tune, const std::atomic<bool>& stop);

  // The task the next slice goes to; npos when none is left.
  size_t pick() const;
  // Applies the outcome of a slice given to `task` (what run() does after each call).
  void record(size_t task, const SliceResult& result);

  size_t trials(size_t task) const { return state_[task].trials; }
  size_t total_trials() const;
  double best_cost_s(size_t task) const { return state_[task].best; }
  bool finished(size_t task) const { return state_[task].finished; }
  size_t size() const { return tasks_.size(); }
  // Sum of weight x best time over the tasks that have one; `complete` says whether all have.
  double estimated_latency_s(bool* complete = nullptr) const;
  // The trials of the next slice for `task` (the warm-up size until it has a slice).
  size_t slice_for(size_t task) const;

  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  struct State {
    size_t trials = 0, rounds = 0;
    double best = 0;              // 0: none yet
    std::vector<double> history;  // best time after each slice of this run
    bool finished = false;
  };
  double gradient(size_t task) const;
  double cost_or_penalty(size_t task) const;
  // The best time among the other alternatives of `task` (infinity when none has one).
  double others_best(size_t task) const;

  std::vector<ScheduledTask> tasks_;
  SchedulerOptions options_;
  std::vector<State> state_;
  size_t last_ = npos;  // the task of the latest slice (round-robin continues after it)
};

}  // namespace kiln::tuner
