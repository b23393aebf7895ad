#include "tuner/search/search.h"

#include <algorithm>
#include <numeric>

#include "compiler/base/error.h"
#include "tuner/search/strategies.h"

namespace kiln::tuner {

SpaceGrid::SpaceGrid(const schedules::ConfigSpace& space) {
  for (const schedules::Knob& k : space.knobs())
    radix_.push_back(static_cast<uint32_t>(k.choices.size()));
}

uint64_t SpaceGrid::size() const {
  uint64_t n = 1;
  for (uint32_t r : radix_) n *= r;
  return n;
}

std::vector<uint32_t> SpaceGrid::point(uint64_t index) const {
  std::vector<uint32_t> p(radix_.size());
  for (size_t k = 0; k < radix_.size(); ++k) {
    p[k] = static_cast<uint32_t>(index % radix_[k]);
    index /= radix_[k];
  }
  return p;
}

uint64_t SpaceGrid::index(const std::vector<uint32_t>& point) const {
  uint64_t index = 0;
  for (size_t k = radix_.size(); k-- > 0;) index = index * radix_[k] + point[k];
  return index;
}

uint64_t SpaceGrid::random_index(std::mt19937_64& rng) const {
  return std::uniform_int_distribution<uint64_t>(0, size() - 1)(rng);
}

std::vector<uint64_t> SearchStrategy::next_batch(size_t n) {
  std::vector<uint64_t> batch;
  for (uint64_t i : propose(n)) {
    if (batch.size() == n) break;
    if (seen_.insert(i).second) batch.push_back(i);
  }
  // A strategy that ran dry (every proposal already seen) is topped up at random, so a
  // batch is short only when the space itself is nearly exhausted.
  if (batch.size() < n) {
    for (uint64_t i : random_unseen(n - batch.size())) {
      seen_.insert(i);
      batch.push_back(i);
    }
  }
  return batch;
}

void SearchStrategy::update(const std::vector<Measured>& results) {
  for (const Measured& m : results) seen_.insert(m.index);
  learn(results);
}

std::vector<uint64_t> SearchStrategy::random_unseen(size_t n) {
  const uint64_t size = grid_.size();
  std::vector<uint64_t> out;
  if (size - std::min<uint64_t>(size, seen_.size()) <= n || size <= 4096) {
    // Small space: list what is left and shuffle.
    for (uint64_t i = 0; i < size; ++i)
      if (!seen_.count(i)) out.push_back(i);
    std::shuffle(out.begin(), out.end(), rng_);
    if (out.size() > n) out.resize(n);
    return out;
  }
  std::unordered_set<uint64_t> picked;
  for (size_t tries = 0; out.size() < n && tries < 100 * n; ++tries) {
    uint64_t i = grid_.random_index(rng_);
    if (!seen_.count(i) && picked.insert(i).second) out.push_back(i);
  }
  return out;
}

void SearchStrategy::set_prior(PriorSamples) {}

std::vector<std::string> search_names() {
  return {"xgb", "ga", "random", "grid"};
}

std::unique_ptr<SearchStrategy> make_search(const std::string& name, SpaceGrid grid, uint64_t seed,
                                            std::shared_ptr<ScoreModel> model, FeatureFn features,
                                            ModelSearchOptions options, PriorSamples prior) {
  if (name == "random") return make_random_search(std::move(grid), seed);
  if (name == "grid") return make_grid_search(std::move(grid), seed);
  if (name == "ga") return make_genetic_search(std::move(grid), seed);
  if (name == "xgb") {
    internal_check(model && features) << "the xgb search needs a model and a feature function";
    return make_model_search(std::move(grid), seed, std::move(model), std::move(features), options,
                             std::move(prior));
  }
  std::string names;
  for (const std::string& n : search_names()) names += (names.empty() ? "" : ", ") + n;
  user_error() << "unknown tuner '" << name << "' (valid: " << names << ")";
  return nullptr;
}

}  // namespace kiln::tuner
