// The cost model on real measurements: every config of dense.packed measured on one
// machine for two shapes (data/dense_*.jsonl, written by make_dense_data). A model trained
// on 200 of them must rank the held-out rest: Spearman >= 0.6 with the IR features. The
// knob-only features are printed beside it for comparison, not asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <random>

#include "cost_model/cost_model.h"
#include "cost_model/ir_features.h"
#include "cost_model/knob_features.h"
#include "cost_model/rank_correlation.h"
#include "tests/cost_model/measured_data.h"
#include "schedules/registry.h"
#include "tuner/builder.h"

namespace kiln::cost_model {
namespace {

using testing::MeasuredConfig;

// The one place that turns a measured config into loop IR: the tuner's builder.
ir::LoweredFunc lower_config(const MeasuredConfig& m) {
  const schedules::OpTemplate& tpl = schedules::template_named(m.template_name);
  return tuner::lower_template(tpl, m.workload, target_from_name(m.target), m.config,
                               "cost_model_kernel")
      .func;
}

std::vector<MeasuredConfig> read_dense_data() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(KILN_COST_MODEL_DATA))
    if (e.path().filename().string().rfind("dense_", 0) == 0 && e.path().extension() == ".jsonl")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<MeasuredConfig> all;
  for (const std::string& f : files) {
    std::vector<MeasuredConfig> part = testing::read_measured_configs(f);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

struct Split {
  std::vector<size_t> train, test;
};

struct Scores {
  std::map<std::string, double> per_task;  // held-out Spearman per workload
  double mean = 0;                         // their mean
  double top1 = 0;  // measured speed of the held-out config ranked first, / the held-out best
};

Scores evaluate(const FeatureRows& features, const std::vector<MeasuredConfig>& data,
                const std::vector<uint32_t>& groups, const Split& split) {
  FeatureRows train_x;
  std::vector<double> train_y;
  std::vector<uint32_t> train_g;
  for (size_t i : split.train) {
    train_x.push_back(features[i]);
    train_y.push_back(data[i].gflops);
    train_g.push_back(groups[i]);
  }
  CostModel model;
  model.fit(train_x, train_y, train_g);

  FeatureRows test_x;
  for (size_t i : split.test) test_x.push_back(features[i]);
  std::vector<double> predicted = model.predict(test_x);
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_task;
  std::map<std::string, std::pair<double, double>> best;  // task -> (best predicted, its gflops)
  std::map<std::string, double> best_measured;
  for (size_t t = 0; t < split.test.size(); ++t) {
    const MeasuredConfig& m = data[split.test[t]];
    std::string task = m.workload.str();
    by_task[task].first.push_back(predicted[t]);
    by_task[task].second.push_back(m.gflops);
    if (!best.count(task) || predicted[t] > best[task].first) best[task] = {predicted[t], m.gflops};
    best_measured[task] = std::max(best_measured[task], m.gflops);
  }
  Scores s;
  for (const auto& [task, pm] : by_task) {
    s.per_task[task] = spearman(pm.first, pm.second);
    s.mean += s.per_task[task] / by_task.size();
    s.top1 += best[task].second / best_measured[task] / by_task.size();
  }
  return s;
}

TEST(DenseRanking, IrFeaturesRankHeldOutConfigs) {
  std::vector<MeasuredConfig> data = read_dense_data();
  ASSERT_GE(data.size(), 300u) << "expected the measured dense configs in " KILN_COST_MODEL_DATA;

  FeatureRows ir_rows, knob_rows;
  std::vector<uint32_t> groups;
  std::map<std::string, uint32_t> group_ids;
  for (const MeasuredConfig& m : data) {
    ir_rows.push_back(ir_features(lower_config(m)));
    const schedules::OpTemplate& tpl = schedules::template_named(m.template_name);
    knob_rows.push_back(
        knob_features(tpl.space(m.workload, target_from_name(m.target)), m.config));
    groups.push_back(group_ids.emplace(m.workload.str(), group_ids.size()).first->second);
  }

  // 200 random configs to train on (from both shapes), the rest held out.
  std::vector<size_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(2024));
  Split split{{order.begin(), order.begin() + 200}, {order.begin() + 200, order.end()}};

  Scores ir = evaluate(ir_rows, data, groups, split);
  Scores knobs = evaluate(knob_rows, data, groups, split);
  std::cout << std::fixed << std::setprecision(3) << "held-out Spearman (" << split.test.size()
            << " configs, trained on " << split.train.size()
            << "; IR features: " << ir_feature_count()
            << " values, knob features: " << knob_feature_count() << ")\n";
  for (const auto& [task, rho] : ir.per_task)
    std::cout << "  " << task << ": IR " << rho << "  knobs " << knobs.per_task[task] << "\n";
  std::cout << "  mean: IR " << ir.mean << "  knobs " << knobs.mean << "\n"
            << "  top-1 (measured speed of the predicted best / the best): IR " << ir.top1
            << "  knobs " << knobs.top1 << "\n";
  EXPECT_GE(ir.mean, 0.6);
}

}  // namespace
}  // namespace kiln::cost_model
