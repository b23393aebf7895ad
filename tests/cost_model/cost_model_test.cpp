// cost_model/cost_model.h (XGBoost through its C API) and rank_correlation.h, on synthetic
// data whose ranking is known.
#include "cost_model/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "cost_model/rank_correlation.h"
#include "compiler/base/error.h"
#include "runtime/process/temp_dir.h"

namespace kiln::cost_model {
namespace {

namespace fs = std::filesystem;

// Rows of 6 features in [0, 1) whose throughput is a monotone function of three of them
// (the other three are noise the model must learn to ignore).
struct Synthetic {
  FeatureRows x;
  std::vector<double> y;
};

Synthetic make_synthetic(size_t n, uint32_t seed, double scale = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Synthetic s;
  for (size_t i = 0; i < n; ++i) {
    std::vector<float> row(6);
    for (float& v : row) v = u(rng);
    s.x.push_back(row);
    s.y.push_back(scale * (std::exp(2 * row[0]) + 3 * row[2] * row[2] + std::sqrt(row[4] + 1)));
  }
  return s;
}

TEST(RankCorrelation, PerfectReversedAndTies) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 1000}), 1);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  EXPECT_EQ(ranks({5, 1, 5, 3}), (std::vector<double>{3.5, 1, 3.5, 2}));
  EXPECT_DOUBLE_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0);
  // Pearson of ranks (1,2,3,4) and (2,1,4,3): 0.6.
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {2, 1, 4, 3}), 0.6, 1e-12);
  EXPECT_THROW(spearman({1, 2}, {1}), UserError);
}

TEST(CostModel, LearnsASyntheticRanking) {
  Synthetic train = make_synthetic(300, 1), test = make_synthetic(200, 2);
  for (Objective o : {Objective::RankPairwise, Objective::SquaredError}) {
    CostModelOptions opt;
    opt.objective = o;
    CostModel m(opt);
    m.fit(train.x, train.y);
    EXPECT_EQ(m.feature_count(), 6u);
    double rho = spearman(m.predict(test.x), test.y);
    std::cout << objective_name(o) << ": held-out Spearman " << rho << "\n";
    EXPECT_GE(rho, 0.9) << objective_name(o);
  }
}

TEST(CostModel, RegressionPredictsThroughputNormalisedToTheBest) {
  Synthetic train = make_synthetic(300, 3, 1000);
  CostModelOptions opt;
  opt.objective = Objective::SquaredError;
  CostModel m(opt);
  m.fit(train.x, train.y);
  for (double p : m.predict(train.x)) {
    EXPECT_GT(p, 0.1);
    EXPECT_LT(p, 1.1);
  }
}

TEST(CostModel, GroupsNeedNotBeSortedAndKeepScalesApart) {
  // Two tasks, 100x apart in speed, rows interleaved: within each the order is learnt.
  Synthetic a = make_synthetic(150, 4, 1), b = make_synthetic(150, 5, 100);
  FeatureRows x;
  std::vector<double> y;
  std::vector<uint32_t> groups;
  for (size_t i = 0; i < 150; ++i) {
    x.push_back(a.x[i]), y.push_back(a.y[i]), groups.push_back(7);
    x.push_back(b.x[i]), y.push_back(b.y[i]), groups.push_back(3);
  }
  CostModel m;
  m.fit(x, y, groups);
  Synthetic test = make_synthetic(100, 6);
  EXPECT_GE(spearman(m.predict(test.x), test.y), 0.9);
}

TEST(CostModel, SaveAndLoadGiveIdenticalPredictions) {
  Synthetic train = make_synthetic(200, 7), test = make_synthetic(50, 8);
  CostModelOptions opt;
  opt.rounds = 30;
  CostModel m(opt);
  m.fit(train.x, train.y);
  TempDir dir;
  std::string path = (fs::path(dir.path()) / "model.ubj").string();
  m.save(path);
  EXPECT_FALSE(fs::exists(path + ".tmp")) << "the temporary is renamed away";
  CostModel loaded = CostModel::load(path);
  EXPECT_EQ(loaded.feature_count(), 6u);
  EXPECT_EQ(loaded.predict(test.x), m.predict(test.x));
  // Saving again over the file replaces it whole.
  m.save(path);
  EXPECT_EQ(CostModel::load(path).predict(test.x), m.predict(test.x));
}

TEST(CostModel, SameSeedSameModel) {
  Synthetic train = make_synthetic(200, 9), test = make_synthetic(50, 10);
  CostModel a, b;
  a.fit(train.x, train.y);
  b.fit(train.x, train.y);
  EXPECT_EQ(a.predict(test.x), b.predict(test.x));
}

TEST(CostModel, BadInputIsAUserError) {
  EXPECT_THROW(CostModel({.rounds = 0}), UserError);
  EXPECT_THROW(CostModel({.eta = 0}), UserError);
  EXPECT_THROW(CostModel({.threads = 0}), UserError);
  CostModel m;
  EXPECT_THROW(m.predict({{1, 2}}), UserError);  // nothing trained
  EXPECT_THROW(m.fit({}, {}), UserError);
  EXPECT_THROW(m.fit({{1, 2}, {3}}, {1, 2}), UserError);      // ragged
  EXPECT_THROW(m.fit({{1, 2}, {3, 4}}, {1}), UserError);      // lengths differ
  EXPECT_THROW(m.fit({{1, 2}, {3, 4}}, {1, -2}), UserError);  // negative throughput
  EXPECT_THROW(m.fit({{1, 2}, {3, 4}}, {1, NAN}), UserError);
  EXPECT_THROW(m.fit({{1, 2}, {3, 4}}, {1, 2}, {0}), UserError);  // one group id short
  m.fit({{1, 2}, {3, 4}, {5, 6}}, {1, 2, 3});
  try {
    m.predict({{1, 2, 3}});
    FAIL() << "a row of the wrong length was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 2"), std::string::npos) << e.what();
  }
}

TEST(CostModel, LoadNamesTheBadFile) {
  TempDir dir;
  std::string missing = (fs::path(dir.path()) / "missing.ubj").string();
  EXPECT_THROW(CostModel::load(missing), UserError);
  std::string junk = (fs::path(dir.path()) / "junk.ubj").string();
  std::ofstream(junk) << "not a model at all";
  try {
    CostModel::load(junk);
    FAIL() << "junk loaded as a model";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(junk), std::string::npos) << msg;
    EXPECT_NE(msg.find("XGBoosterLoadModelFromBuffer"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace kiln::cost_model
