// Search strategies over a template's config space, as AutoTVM's tuners: each proposes
// batches of configs to measure and learns from their measured throughput.
//
// A strategy sees the space only as a grid: knob k has radix[k] choices, a point is one
// choice position per knob, and its index is the mixed-radix number of those positions (the
// same numbering as schedules::ConfigSpace::at). No strategy ever proposes a point twice,
// and points learned through update() (a resumed log's, say) are never proposed either.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "schedules/config.h"

namespace kiln::tuner {

class SpaceGrid {
 public:
  explicit SpaceGrid(const schedules::ConfigSpace& space);
  explicit SpaceGrid(std::vector<uint32_t> radix) : radix_(std::move(radix)) {}
  uint64_t size() const;
  size_t knobs() const { return radix_.size(); }
  uint32_t radix(size_t knob) const { return radix_[knob]; }
  std::vector<uint32_t> point(uint64_t index) const;
  uint64_t index(const std::vector<uint32_t>& point) const;
  uint64_t random_index(std::mt19937_64& rng) const;

 private:
  std::vector<uint32_t> radix_;
};

// One measured point: its throughput (GFLOPS; 0 for a failed or wrong candidate).
struct Measured {
  uint64_t index = 0;
  double gflops = 0;
};

// Transferred knowledge: features and throughputs of other tasks' records (one group per
// task), added to every fit.
struct PriorSamples {
  std::vector<std::vector<float>> x;
  std::vector<float> y;
  std::vector<uint32_t> groups;
};

class SearchStrategy {
 public:
  SearchStrategy(SpaceGrid grid, uint64_t seed) : grid_(std::move(grid)), rng_(seed) {}
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  // Up to `n` points never proposed or learned before; fewer, or none, once the space is
  // (nearly) exhausted.
  std::vector<uint64_t> next_batch(size_t n);
  // Learns from measured points (also from a resumed log, before the first batch).
  void update(const std::vector<Measured>& results);
  // Takes a point chosen outside the strategy (TuneTask::first) so it is never proposed;
  // false when it was proposed or learned already.
  bool claim(uint64_t index) { return seen_.insert(index).second; }
  bool exhausted() const { return seen_.size() >= grid_.size(); }
  // Replaces the samples of other tasks that a model-based search learns from beside its own
  // (a network tune shares each template's records between its tasks); others ignore them.
  virtual void set_prior(PriorSamples prior);
  const SpaceGrid& grid() const { return grid_; }

 protected:
  virtual std::vector<uint64_t> propose(size_t n) = 0;  // may return seen points: filtered
  virtual void learn(const std::vector<Measured>& results) = 0;
  bool seen(uint64_t index) const { return seen_.count(index) > 0; }
  // Up to `n` unseen points drawn uniformly (exhaustive listing when the space is small).
  std::vector<uint64_t> random_unseen(size_t n);

  SpaceGrid grid_;
  std::mt19937_64 rng_;

 private:
  std::unordered_set<uint64_t> seen_;
};

// A model that scores points from their features (tuner/model_search.h uses the XGBoost
// cost model through this): fit on measured points, predict unmeasured ones.
class ScoreModel {
 public:
  virtual ~ScoreModel() = default;
  // `groups` gives the sizes of consecutive groups of rows that are comparable (one task
  // each), for ranking objectives; empty means one group.
  virtual void fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
                   const std::vector<uint32_t>& groups) = 0;
  virtual std::vector<float> predict(const std::vector<std::vector<float>>& x) = 0;
  // True when it can predict before any fit: a model trained earlier (a saved cost model
  // loaded on resume or from --transfer), which then guides the first batches too.
  virtual bool pretrained() const { return false; }
};

// Features of a point (e.g. of its lowered loop IR); called once per point, results cached.
using FeatureFn = std::function<std::vector<float>(uint64_t index)>;

struct ModelSearchOptions {
  size_t min_samples = 16;        // random points until this many are measured
  double epsilon = 0.05;          // share of each batch drawn at random (exploration)
  size_t chains = 64;             // parallel simulated-annealing chains
  size_t steps = 60;              // annealing steps per batch
  double start_temperature = 1.0; // of scores normalised to [0, 1]
  // Points whose features are computed per batch: IR features lower the config (ms each),
  // and in a space of 10^4-10^7 almost every step of every chain meets a new point, so an
  // unbounded walk would lower thousands per batch. Past the budget, a step to a point not
  // yet featurised is rejected. Features are computed on all cores.
  size_t max_new_features = 384;
};


// name: "random", "grid", "ga", or "xgb" (needs `model` and `features`).
std::unique_ptr<SearchStrategy> make_search(const std::string& name, SpaceGrid grid, uint64_t seed,
                                            std::shared_ptr<ScoreModel> model = nullptr,
                                            FeatureFn features = nullptr,
                                            ModelSearchOptions options = {},
                                            PriorSamples prior = {});
// The names make_search accepts.
std::vector<std::string> search_names();

}  // namespace kiln::tuner
