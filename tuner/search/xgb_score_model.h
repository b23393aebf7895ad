// The XGBoost cost model (cost_model/) as the ScoreModel that the model-based search asks.
#pragma once

#include <memory>

#include "cost_model/cost_model.h"
#include "tuner/search/search.h"

namespace kiln::tuner {

class XgbScoreModel : public ScoreModel {
 public:
  explicit XgbScoreModel(cost_model::CostModelOptions options = {}) : model_(options) {}
  // Starts from a trained model (loaded from a file): pretrained() until the first fit.
  explicit XgbScoreModel(cost_model::CostModel trained)
      : model_(std::move(trained)), pretrained_(model_.trained()) {}
  void fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
           const std::vector<uint32_t>& groups) override;
  std::vector<float> predict(const std::vector<std::vector<float>>& x) override;
  bool pretrained() const override { return pretrained_; }
  const cost_model::CostModel& model() const { return model_; }

 private:
  cost_model::CostModel model_;
  bool pretrained_ = false;
};

}  // namespace kiln::tuner
