#include "cost_model/cost_model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "cost_model/xgboost_handles.h"
#include "compiler/base/error.h"

namespace kiln::cost_model {

namespace {

// Rows as one row-major block, checking they all have `cols` values.
std::vector<float> flatten_rows(const FeatureRows& rows, const std::vector<size_t>& order,
                                size_t cols) {
  std::vector<float> data;
  data.reserve(order.size() * cols);
  for (size_t r : order) {
    user_check(rows[r].size() == cols) << "cost model: feature row " << r << " has "
                                       << rows[r].size() << " values, expected " << cols;
    data.insert(data.end(), rows[r].begin(), rows[r].end());
  }
  return data;
}

void set_common_params(xgb::Booster& b, const CostModelOptions& o) {
  b.set_param("nthread", std::to_string(o.threads));
  b.set_param("verbosity", "0");
}

}  // namespace

const char* objective_name(Objective o) {
  switch (o) {
    case Objective::RankPairwise:
      return "rank:pairwise";
    case Objective::SquaredError:
      return "reg:squarederror";
  }
  return "?";
}

CostModel::CostModel(CostModelOptions options) : options_(options) {
  user_check(options_.rounds >= 1)
      << "cost model: rounds must be at least 1, got " << options_.rounds;
  user_check(options_.max_depth >= 1)
      << "cost model: max_depth must be at least 1, got " << options_.max_depth;
  user_check(options_.eta > 0 && options_.eta <= 1)
      << "cost model: eta must be in (0, 1], got " << options_.eta;
  user_check(options_.threads >= 1)
      << "cost model: threads must be at least 1, got " << options_.threads;
}

CostModel::~CostModel() = default;
CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;

void CostModel::fit(const FeatureRows& features, const std::vector<double>& throughputs,
                    const std::vector<uint32_t>& groups) {
  const size_t n = features.size();
  user_check(n > 0) << "cost model: fit needs at least one row";
  user_check(throughputs.size() == n)
      << "cost model: " << n << " feature rows but " << throughputs.size() << " throughputs";
  user_check(groups.empty() || groups.size() == n)
      << "cost model: " << n << " feature rows but " << groups.size()
      << " group ids (give one per row, or none)";
  const size_t cols = features[0].size();
  user_check(cols > 0) << "cost model: feature rows are empty";
  for (size_t i = 0; i < n; ++i)
    user_check(std::isfinite(throughputs[i]) && throughputs[i] >= 0)
        << "cost model: throughput " << i << " is " << throughputs[i]
        << "; throughputs must be finite and >= 0";

  // XGBoost wants each group's rows together: order rows by group, keeping their order
  // within a group.
  auto group_of = [&](size_t i) { return groups.empty() ? 0u : groups[i]; };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return group_of(a) < group_of(b); });
  std::vector<unsigned> sizes;
  std::vector<float> labels(n);
  for (size_t begin = 0; begin < n;) {
    size_t end = begin;
    double best = 0;
    while (end < n && group_of(order[end]) == group_of(order[begin]))
      best = std::max(best, throughputs[order[end++]]);
    for (size_t i = begin; i < end; ++i)
      labels[i] = best > 0 ? static_cast<float>(throughputs[order[i]] / best) : 0.0f;
    sizes.push_back(static_cast<unsigned>(end - begin));
    begin = end;
  }

  xgb::DMatrix train(flatten_rows(features, order, cols), n, cols);
  train.set_labels(labels);
  train.set_group_sizes(sizes);
  auto booster = std::make_unique<xgb::Booster>(&train);
  set_common_params(*booster, options_);
  booster->set_param("objective", objective_name(options_.objective));
  booster->set_param("max_depth", std::to_string(options_.max_depth));
  booster->set_param("eta", std::to_string(options_.eta));
  booster->set_param("seed", std::to_string(options_.seed));
  // Exact greedy splits: the training sets of a tuning run are small (hundreds to a few
  // thousand rows), and exact is deterministic for a seed.
  booster->set_param("tree_method", "exact");
  for (int round = 0; round < options_.rounds; ++round) booster->update_one_iter(round, train);
  booster_ = std::move(booster);
  feature_count_ = cols;
}

std::vector<double> CostModel::predict(const FeatureRows& features) const {
  user_check(trained()) << "cost model: predict needs a model (fit or load one first)";
  if (features.empty()) return {};
  std::vector<size_t> order(features.size());
  std::iota(order.begin(), order.end(), 0);
  xgb::DMatrix data(flatten_rows(features, order, feature_count_), features.size(), feature_count_);
  std::vector<float> scores = booster_->predict(data);
  internal_check(scores.size() == features.size())
      << "XGBoost gave " << scores.size() << " predictions for " << features.size() << " rows";
  return std::vector<double>(scores.begin(), scores.end());
}

void CostModel::save(const std::string& path) const {
  user_check(trained()) << "cost model: nothing to save to " << path << " (fit a model first)";
  std::vector<char> bytes = booster_->save_to_buffer();
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      user_error() << "cost model: cannot write " << tmp;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    user_error() << "cost model: cannot rename " << tmp << " to " << path << ": " << ec.message();
  }
}

CostModel CostModel::load(const std::string& path, CostModelOptions options) {
  std::ifstream in(path, std::ios::binary);
  user_check(in.good()) << "cost model: cannot open " << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  user_check(!bytes.empty()) << "cost model: " << path << " is empty, not a saved model";
  CostModel m(options);
  auto booster = std::make_unique<xgb::Booster>(nullptr);
  try {
    booster->load_from_buffer(bytes);
  } catch (const UserError& e) {
    user_error() << "cost model: " << path << " is not a saved model (" << e.what() << ")";
  }
  set_common_params(*booster, options);
  m.feature_count_ = booster->feature_count();
  m.booster_ = std::move(booster);
  return m;
}

}  // namespace kiln::cost_model
