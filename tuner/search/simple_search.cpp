// The two baselines: random and grid. Everything else must beat random to earn its keep.
#include "tuner/search/strategies.h"

namespace kiln::tuner {
namespace {

class RandomSearch : public SearchStrategy {
 public:
  using SearchStrategy::SearchStrategy;
  std::string name() const override { return "random"; }

 protected:
  std::vector<uint64_t> propose(size_t n) override { return random_unseen(n); }
  void learn(const std::vector<Measured>&) override {}
};

class GridSearch : public SearchStrategy {
 public:
  using SearchStrategy::SearchStrategy;
  std::string name() const override { return "grid"; }

 protected:
  std::vector<uint64_t> propose(size_t n) override {
    std::vector<uint64_t> out;
    for (; next_ < grid_.size() && out.size() < n; ++next_)
      if (!seen(next_)) out.push_back(next_);
    return out;
  }
  void learn(const std::vector<Measured>&) override {}

 private:
  uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random_search(SpaceGrid grid, uint64_t seed) {
  return std::make_unique<RandomSearch>(std::move(grid), seed);
}

std::unique_ptr<SearchStrategy> make_grid_search(SpaceGrid grid, uint64_t seed) {
  return std::make_unique<GridSearch>(std::move(grid), seed);
}

}  // namespace kiln::tuner
