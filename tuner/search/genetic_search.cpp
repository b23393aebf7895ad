// A genetic algorithm over the knob grid, in the manner of AutoTVM's GATuner: the fittest
// measured points (by throughput) are the population; children take each knob from one of
// two parents picked with probability proportional to fitness, then each knob mutates to a
// random choice with a small probability.
#include <algorithm>
#include <unordered_map>

#include "tuner/search/strategies.h"

namespace kiln::tuner {
namespace {

constexpr size_t kPopulation = 64;
constexpr double kMutation = 0.1;

class GeneticSearch : public SearchStrategy {
 public:
  using SearchStrategy::SearchStrategy;
  std::string name() const override { return "ga"; }

 protected:
  std::vector<uint64_t> propose(size_t n) override {
    std::vector<std::pair<double, uint64_t>> population = fittest();
    // Too few parents with any fitness yet: explore at random.
    if (population.size() < 4 || population.front().first <= 0) return random_unseen(n);
    std::vector<double> weights;
    for (const auto& [fitness, index] : population) weights.push_back(fitness + 1e-9);
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
    std::uniform_real_distribution<double> coin(0, 1);
    std::vector<uint64_t> out;
    for (size_t tries = 0; out.size() < n && tries < 20 * n; ++tries) {
      std::vector<uint32_t> a = grid_.point(population[pick(rng_)].second);
      std::vector<uint32_t> b = grid_.point(population[pick(rng_)].second);
      for (size_t k = 0; k < a.size(); ++k) {
        if (coin(rng_) < 0.5) a[k] = b[k];
        if (coin(rng_) < kMutation) a[k] = static_cast<uint32_t>(rng_() % grid_.radix(k));
      }
      uint64_t child = grid_.index(a);
      if (!seen(child) && std::find(out.begin(), out.end(), child) == out.end())
        out.push_back(child);
    }
    return out;
  }

  void learn(const std::vector<Measured>& results) override {
    for (const Measured& m : results) fitness_[m.index] = m.gflops;
  }

 private:
  // The kPopulation best measured points, best first.
  std::vector<std::pair<double, uint64_t>> fittest() const {
    std::vector<std::pair<double, uint64_t>> all;
    for (const auto& [index, fitness] : fitness_) all.emplace_back(fitness, index);
    size_t keep = std::min(kPopulation, all.size());
    std::partial_sort(all.begin(), all.begin() + keep, all.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first; });
    all.resize(keep);
    return all;
  }

  std::unordered_map<uint64_t, double> fitness_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_genetic_search(SpaceGrid grid, uint64_t seed) {
  return std::make_unique<GeneticSearch>(std::move(grid), seed);
}

}  // namespace kiln::tuner
