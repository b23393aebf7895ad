// The model-based search of AutoTVM's XGBTuner: a cost model, re-fit on every measured point
// (plus transferred ones), scores candidates by their features; simulated annealing walks
// the knob grid from the best measured points towards points the model likes, and each
// batch takes the best-predicted unseen points it met, with a few random ones (epsilon-greedy)
// so that a wrong model cannot trap the search. A pre-trained model (ScoreModel::pretrained)
// guides the batches before the first fit.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "tuner/search/strategies.h"

namespace kiln::tuner {
namespace {

class ModelSearch : public SearchStrategy {
 public:
  ModelSearch(SpaceGrid grid, uint64_t seed, std::shared_ptr<ScoreModel> model, FeatureFn features,
              ModelSearchOptions options, PriorSamples prior)
      : SearchStrategy(std::move(grid), seed),
        model_(std::move(model)),
        features_(std::move(features)),
        options_(options),
        prior_(std::move(prior)),
        dirty_(!prior_.x.empty()) {}  // a prior is something to fit on before any measurement
  std::string name() const override { return "xgb"; }
  void set_prior(PriorSamples prior) override {
    prior_ = std::move(prior);
    dirty_ = true;
  }

 protected:
  std::vector<uint64_t> propose(size_t n) override {
    if (measured_.size() < options_.min_samples && prior_.x.empty()) {
      // Too few samples to fit on: random points, unless a pre-trained model can rank them
      // (refitting it on a handful of points would throw its knowledge away).
      if (!model_->pretrained()) return random_unseen(n);
    } else {
      fit();
    }
    size_t exploit = n - static_cast<size_t>(std::round(options_.epsilon * n));
    std::vector<uint64_t> out = anneal(exploit);
    for (uint64_t i : random_unseen(n)) {
      if (out.size() >= n) break;
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
    return out;
  }

  void learn(const std::vector<Measured>& results) override {
    for (const Measured& m : results) measured_[m.index] = m.gflops;
    dirty_ = true;
  }

 private:
  // Computes and caches the features of those `points` not yet cached, at most `budget` of
  // them, on all cores; a point that cannot be instantiated caches as empty (never a
  // candidate). Returns how many it computed.
  size_t featurise(const std::vector<uint64_t>& points, size_t budget) {
    std::vector<uint64_t> todo;
    std::unordered_set<uint64_t> queued;
    for (uint64_t p : points)
      if (todo.size() < budget && !cache_.count(p) && queued.insert(p).second) todo.push_back(p);
    std::vector<std::vector<float>> out(todo.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i = next++; i < todo.size(); i = next++) {
        try {
          out[i] = features_(todo[i]);
        } catch (const std::exception&) {
          out[i].clear();
        }
      }
    };
    const size_t threads =
        std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), todo.size());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < todo.size(); ++i) cache_.emplace(todo[i], std::move(out[i]));
    return todo.size();
  }

  // The cached features of a point; empty when it is invalid or not featurised yet.
  const std::vector<float>& features(uint64_t index) const {
    static const std::vector<float> kNone;
    auto it = cache_.find(index);
    return it == cache_.end() ? kNone : it->second;
  }

  void fit() {
    if (!dirty_) return;
    dirty_ = false;
    std::vector<std::vector<float>> x = prior_.x;
    std::vector<float> y = prior_.y;
    std::vector<uint32_t> groups = prior_.groups;
    double best = 0;
    std::vector<uint64_t> measured;
    for (const auto& [index, gflops] : measured_) {
      best = std::max(best, gflops);
      measured.push_back(index);
    }
    featurise(measured, std::numeric_limits<size_t>::max());
    uint32_t rows = 0;
    for (const auto& [index, gflops] : measured_) {
      const std::vector<float>& f = features(index);
      if (f.empty()) continue;
      x.push_back(f);
      y.push_back(best > 0 ? static_cast<float>(gflops / best) : 0.0f);
      ++rows;
    }
    if (rows > 0) groups.push_back(rows);
    if (!x.empty()) model_->fit(x, y, groups);
  }

  // Scores for `points` from one model call; points without features (invalid, or past
  // this batch's featurising budget) score -infinity.
  std::vector<double> predict(const std::vector<uint64_t>& points) {
    budget_left_ -= featurise(points, budget_left_);
    std::vector<std::vector<float>> x;
    std::vector<size_t> rows;
    for (size_t i = 0; i < points.size(); ++i) {
      const std::vector<float>& f = features(points[i]);
      if (f.empty()) continue;
      x.push_back(f);
      rows.push_back(i);
    }
    std::vector<double> scores(points.size(), -INFINITY);
    if (x.empty()) return scores;
    std::vector<float> p = model_->predict(x);
    for (size_t r = 0; r < rows.size(); ++r) scores[rows[r]] = p[r];
    return scores;
  }

  std::vector<uint64_t> anneal(size_t want) {
    budget_left_ = options_.max_new_features;
    // Start from the best measured points, the rest of the chains at random.
    std::vector<std::pair<double, uint64_t>> by_gflops;
    for (const auto& [index, gflops] : measured_) by_gflops.emplace_back(gflops, index);
    std::sort(by_gflops.rbegin(), by_gflops.rend());
    std::vector<uint64_t> chain;
    for (size_t i = 0; i < by_gflops.size() && chain.size() < options_.chains / 2; ++i)
      chain.push_back(by_gflops[i].second);
    while (chain.size() < options_.chains) chain.push_back(grid_.random_index(rng_));
    std::vector<double> score = predict(chain);

    std::map<uint64_t, double> found;  // unseen points met on the way, with their scores
    auto consider = [&](uint64_t index, double s) {
      if (!seen(index) && std::isfinite(s)) found[index] = s;
    };
    for (size_t c = 0; c < chain.size(); ++c) consider(chain[c], score[c]);
    double lo = INFINITY, hi = -INFINITY;
    for (double s : score)
      if (std::isfinite(s)) lo = std::min(lo, s), hi = std::max(hi, s);
    const double scale = hi > lo ? hi - lo : 1.0;
    std::uniform_real_distribution<double> coin(0, 1);
    for (size_t step = 0; step < options_.steps; ++step) {
      const double t = options_.start_temperature * scale * (1.0 - double(step) / options_.steps);
      std::vector<uint64_t> next = chain;
      for (uint64_t& p : next) {
        std::vector<uint32_t> point = grid_.point(p);
        size_t k = rng_() % point.size();
        point[k] = static_cast<uint32_t>(rng_() % grid_.radix(k));
        p = grid_.index(point);
      }
      std::vector<double> next_score = predict(next);
      for (size_t c = 0; c < chain.size(); ++c) {
        consider(next[c], next_score[c]);
        const double gain = next_score[c] - score[c];
        if (gain >= 0 || (t > 0 && coin(rng_) < std::exp(gain / t)))
          chain[c] = next[c], score[c] = next_score[c];
      }
    }
    std::vector<std::pair<double, uint64_t>> ranked;
    for (const auto& [index, s] : found) ranked.emplace_back(s, index);
    std::sort(ranked.rbegin(), ranked.rend());
    std::vector<uint64_t> out;
    for (size_t i = 0; i < ranked.size() && out.size() < want; ++i) out.push_back(ranked[i].second);
    return out;
  }

  std::shared_ptr<ScoreModel> model_;
  FeatureFn features_;
  ModelSearchOptions options_;
  PriorSamples prior_;
  std::unordered_map<uint64_t, double> measured_;
  std::unordered_map<uint64_t, std::vector<float>> cache_;
  bool dirty_ = false;
  size_t budget_left_ = 0;  // points predict() may still featurise in this batch
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_search(SpaceGrid grid, uint64_t seed,
                                                  std::shared_ptr<ScoreModel> model,
                                                  FeatureFn features, ModelSearchOptions options,
                                                  PriorSamples prior) {
  return std::make_unique<ModelSearch>(std::move(grid), seed, std::move(model), std::move(features),
                                       options, std::move(prior));
}

}  // namespace kiln::tuner
