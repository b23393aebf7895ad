// The strategies behind make_search (tuner/search/search.h), one file each.
#pragma once

#include <memory>

#include "tuner/search/search.h"

namespace kiln::tuner {

// Uniform random points, never repeating.
std::unique_ptr<SearchStrategy> make_random_search(SpaceGrid grid, uint64_t seed);
// Points in index order (the exhaustive sweep of a small space).
std::unique_ptr<SearchStrategy> make_grid_search(SpaceGrid grid, uint64_t seed);
// A genetic algorithm: fitness-proportional parents, uniform crossover per knob, mutation.
std::unique_ptr<SearchStrategy> make_genetic_search(SpaceGrid grid, uint64_t seed);
// The cost model + simulated annealing over the space (AutoTVM's XGBTuner).
std::unique_ptr<SearchStrategy> make_model_search(SpaceGrid grid, uint64_t seed,
                                                  std::shared_ptr<ScoreModel> model,
                                                  FeatureFn features, ModelSearchOptions options,
                                                  PriorSamples prior);

}  // namespace kiln::tuner
