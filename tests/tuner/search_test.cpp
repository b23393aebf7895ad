// Search strategies on a synthetic space with a known optimum (deterministic seeds, no
// measurement): no point is ever proposed twice, grid sweeps in order, a resumed log's points
// are skipped, and the genetic search finds the peak in fewer trials than random.
#include "tuner/search/search.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <set>

#include "tuner/search/xgb_score_model.h"

namespace kiln::tuner {
namespace {

// A smooth landscape over 6 knobs with one peak and a tilted plateau, values in (0, 100].
double landscape(const SpaceGrid& g, uint64_t index) {
  const std::vector<uint32_t> p = g.point(index);
  const double peak[] = {5, 2, 6, 1, 3, 0};
  double v = 0;
  for (size_t k = 0; k < p.size(); ++k) v += std::pow((p[k] - peak[k]) / double(g.radix(k)), 2);
  return 100 * std::exp(-3 * v);
}

// Trials until a strategy first measures a point within 95% of the best, batches of 8.
size_t trials_to_near_best(const std::string& name, uint64_t seed, size_t budget) {
  SpaceGrid grid({8, 4, 8, 4, 6, 5});
  // The model sees a point's knob positions: the landscape is smooth in them.
  FeatureFn positions = [grid](uint64_t i) {
    std::vector<uint32_t> p = grid.point(i);
    return std::vector<float>(p.begin(), p.end());
  };
  std::shared_ptr<ScoreModel> model;
  if (name == "xgb") model = std::make_shared<XgbScoreModel>();
  auto s = make_search(name, grid, seed, model, positions);
  size_t trials = 0;
  while (trials < budget) {
    std::vector<uint64_t> batch = s->next_batch(8);
    if (batch.empty()) break;
    std::vector<Measured> results;
    for (uint64_t i : batch) {
      ++trials;
      double v = landscape(grid, i);
      if (v >= 95) return trials;
      results.push_back({i, v});
    }
    s->update(results);
  }
  return budget;
}

TEST(SpaceGrid, IndexAndPointRoundTrip) {
  SpaceGrid g({3, 1, 4, 2});
  EXPECT_EQ(g.size(), 24u);
  for (uint64_t i = 0; i < g.size(); ++i) EXPECT_EQ(g.index(g.point(i)), i);
  EXPECT_EQ(g.point(5), (std::vector<uint32_t>{2, 0, 1, 0}));  // 5 = 2 + 3*1
}

TEST(Search, NeverRepeatsAndExhaustsSmallSpaces) {
  for (const std::string& name : {"random", "grid", "ga"}) {
    auto s = make_search(name, SpaceGrid({3, 2, 4}), 7);
    std::set<uint64_t> seen;
    for (int round = 0; round < 10; ++round) {
      std::vector<uint64_t> batch = s->next_batch(5);
      std::vector<Measured> results;
      for (uint64_t i : batch) {
        EXPECT_TRUE(seen.insert(i).second) << name << " proposed " << i << " twice";
        results.push_back({i, double(i % 7)});
      }
      s->update(results);
    }
    EXPECT_EQ(seen.size(), 24u) << name;
    EXPECT_TRUE(s->exhausted()) << name;
    EXPECT_TRUE(s->next_batch(5).empty()) << name;
  }
}

TEST(Search, GridGoesInIndexOrder) {
  auto s = make_search("grid", SpaceGrid({4, 4}), 1);
  EXPECT_EQ(s->next_batch(3), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(s->next_batch(2), (std::vector<uint64_t>{3, 4}));
}

TEST(Search, ResumedPointsAreNotProposedAgain) {
  for (const std::string& name : {"random", "grid", "ga"}) {
    auto s = make_search(name, SpaceGrid({5, 5}), 3);
    std::vector<Measured> resumed;
    for (uint64_t i = 0; i < 20; ++i) resumed.push_back({i, double(i)});
    s->update(resumed);
    std::vector<uint64_t> rest = s->next_batch(10);
    EXPECT_EQ(rest.size(), 5u) << name;
    for (uint64_t i : rest) EXPECT_GE(i, 20u) << name;
  }
}

TEST(Search, UnknownNameListsTheValidOnes) {
  try {
    make_search("annealing", SpaceGrid({2}), 1);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("xgb, ga, random, grid"), std::string::npos) << e.what();
  }
}

TEST(Search, GeneticAndModelBeatRandomOnASmoothLandscape) {
  size_t ga = 0, xgb = 0, random = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ga += trials_to_near_best("ga", seed, 4000);
    xgb += trials_to_near_best("xgb", seed, 4000);
    random += trials_to_near_best("random", seed, 4000);
  }
  std::printf("trials to 95%% of the peak over 5 seeds: xgb %zu, ga %zu, random %zu\n", xgb, ga,
              random);
  EXPECT_LT(ga, random);
  EXPECT_LT(xgb, random / 2);
}

// The mean landscape value of a fresh search's first batch (no samples yet), started from
// `model`.
double first_batch_mean(std::shared_ptr<ScoreModel> model, uint64_t seed) {
  SpaceGrid grid({8, 4, 8, 4, 6, 5});
  FeatureFn positions = [grid](uint64_t i) {
    std::vector<uint32_t> p = grid.point(i);
    return std::vector<float>(p.begin(), p.end());
  };
  auto s = make_search("xgb", grid, seed, std::move(model), positions);
  double sum = 0;
  std::vector<uint64_t> batch = s->next_batch(16);
  for (uint64_t i : batch) sum += landscape(grid, i);
  return sum / std::max<size_t>(1, batch.size());
}

// A cost model trained on an earlier run (saved and loaded, as a resumed network tune does)
// guides the first batch of a search with no samples: better points than random ones.
TEST(Search, PretrainedModelGuidesTheFirstBatch) {
  SpaceGrid grid({8, 4, 8, 4, 6, 5});
  std::mt19937_64 rng(3);
  cost_model::FeatureRows x;
  std::vector<double> y;
  for (int i = 0; i < 400; ++i) {
    const uint64_t index = grid.random_index(rng);
    std::vector<uint32_t> p = grid.point(index);
    x.emplace_back(p.begin(), p.end());
    y.push_back(landscape(grid, index));
  }
  cost_model::CostModel trained;
  trained.fit(x, y);
  const std::string path = ::testing::TempDir() + "/pretrained.xgb";
  trained.save(path);

  double guided = 0, fresh = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto loaded = std::make_shared<XgbScoreModel>(cost_model::CostModel::load(path));
    EXPECT_TRUE(loaded->pretrained());
    guided += first_batch_mean(loaded, seed);
    fresh += first_batch_mean(std::make_shared<XgbScoreModel>(), seed);
  }
  std::printf("first batch, mean value: pre-trained %.1f, fresh %.1f\n", guided / 3, fresh / 3);
  EXPECT_GT(guided, 2 * fresh);
}

// A model that remembers how many rows each fit had, and scores every point alike.
class CountingModel : public ScoreModel {
 public:
  void fit(const std::vector<std::vector<float>>& x, const std::vector<float>&,
           const std::vector<uint32_t>&) override {
    rows.push_back(x.size());
  }
  std::vector<float> predict(const std::vector<std::vector<float>>& x) override {
    return std::vector<float>(x.size(), 0.0f);
  }
  std::vector<size_t> rows;
};

// Other tasks' samples given when the search is made (kiln tune --transfer) are fitted on
// before the first batch, with nothing measured yet, and stay beside the task's own samples.
TEST(Search, APriorGivenAtTheStartGuidesTheFirstBatchAndStays) {
  SpaceGrid grid({8, 4, 8, 4, 6, 5});
  FeatureFn positions = [grid](uint64_t i) {
    std::vector<uint32_t> p = grid.point(i);
    return std::vector<float>(p.begin(), p.end());
  };
  PriorSamples prior;
  for (int i = 0; i < 10; ++i) {
    prior.x.push_back({1, 2, 3, 4, 5, float(i % 5)});
    prior.y.push_back(i / 10.0f);
  }
  prior.groups = {10};
  auto model = std::make_shared<CountingModel>();
  auto s = make_search("xgb", grid, 1, model, positions, ModelSearchOptions{}, prior);
  for (int b = 0; b < 3; ++b) {
    std::vector<Measured> results;
    for (uint64_t i : s->next_batch(16)) results.push_back({i, landscape(grid, i)});
    s->update(results);
  }
  // Fits before batches 1-3: the prior alone, then with 16 and 32 measured beside it.
  EXPECT_EQ(model->rows, (std::vector<size_t>{10, 26, 42}));
}

// Spaces of 10^7 points: no strategy lists the space, and the model search featurises (for
// IR features: lowers) a bounded number of points per batch however many its chains meet.
TEST(Search, ScalesToTenMillionPoints) {
  SpaceGrid grid({16, 12, 10, 8, 6, 5, 4, 3, 2});
  ASSERT_GT(grid.size(), 10'000'000u);
  std::atomic<size_t> featurised{0};
  FeatureFn positions = [grid, &featurised](uint64_t i) {
    ++featurised;  // called from several threads
    std::vector<uint32_t> p = grid.point(i);
    return std::vector<float>(p.begin(), p.end());
  };
  ModelSearchOptions options;
  for (const std::string name : {"xgb", "ga", "random", "grid"}) {
    featurised = 0;
    std::shared_ptr<ScoreModel> model = std::make_shared<XgbScoreModel>();
    auto s = make_search(name, grid, 5, model, positions, options);
    std::set<uint64_t> seen;
    const size_t batches = 6, n = 16;
    for (size_t b = 0; b < batches; ++b) {
      std::vector<uint64_t> batch = s->next_batch(n);
      ASSERT_EQ(batch.size(), n) << name;
      std::vector<Measured> results;
      for (uint64_t i : batch) {
        EXPECT_TRUE(seen.insert(i).second) << name << " proposed " << i << " twice";
        const std::vector<uint32_t> p = grid.point(i);
        results.push_back({i, 1.0 + p[0] + 2.0 * p[3]});  // any landscape: this is about cost
      }
      s->update(results);
    }
    // Each measured point once, plus at most the budget per model-guided batch.
    EXPECT_LE(featurised.load(), batches * n + batches * options.max_new_features) << name;
  }
}

}  // namespace
}  // namespace kiln::tuner
