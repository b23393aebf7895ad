// The tuner's cost model: gradient-boosted trees (XGBoost, through its C API) that learn
// from measured configs which ones run fast, as AutoTVM's XGBTuner does, so the tuner can
// rank thousands of candidates and measure only the most promising.
//
// Rows are feature vectors of one fixed length (ir_features.h or knob_features.h); the
// targets are measured throughputs (GFLOPS, or anything where larger is better). By default
// the model learns to RANK (rank:pairwise): only the order within a group counts, which is
// what choosing candidates needs, and groups keep tasks of different speeds apart (one group
// per task). With reg:squarederror it predicts throughput normalised to the best of its
// group (throughput / max), so tasks of different scale share one range.
//
// One model serves one thread at a time (XGBoost hands predictions back in buffers that
// the booster owns).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::cost_model {

namespace xgb {
class Booster;
}

enum class Objective { RankPairwise, SquaredError };
// "rank:pairwise", "reg:squarederror": XGBoost's names.
const char* objective_name(Objective o);

struct CostModelOptions {
  Objective objective = Objective::RankPairwise;
  int rounds = 100;   // boosting rounds (trees)
  int max_depth = 3;  // shallow trees, as AutoTVM's XGBTuner uses: small data, less overfitting
  double eta = 0.3;   // learning rate
  uint64_t seed = 0;
  int threads = 1;  // XGBoost's threads: the tuner measures on the other cores
};

using FeatureRows = std::vector<std::vector<float>>;

class CostModel {
 public:
  // UserError when an option is out of range (rounds, max_depth, threads >= 1; eta in (0, 1]).
  explicit CostModel(CostModelOptions options = {});
  ~CostModel();
  CostModel(CostModel&&) noexcept;
  CostModel& operator=(CostModel&&) noexcept;

  // Trains a new model (any earlier one is dropped). `groups` holds one id per row (rows
  // need not be sorted by it); empty means one group. UserError on ragged or empty rows,
  // a length mismatch, or a negative or non-finite throughput.
  void fit(const FeatureRows& features, const std::vector<double>& throughputs,
           const std::vector<uint32_t>& groups = {});
  // One score per row, larger meaning faster. Under rank:pairwise scores only order rows;
  // under reg:squarederror they estimate normalised throughput.
  std::vector<double> predict(const FeatureRows& features) const;

  // The trained model as a file (XGBoost's UBJSON); written to a temporary beside `path`
  // and renamed, so a reader never sees half a model.
  void save(const std::string& path) const;
  // A saved model; `options` supplies what a file does not hold (threads). UserError
  // naming the file when it is missing or not a model.
  static CostModel load(const std::string& path, CostModelOptions options = {});

  bool trained() const { return booster_ != nullptr; }
  size_t feature_count() const { return feature_count_; }
  const CostModelOptions& options() const { return options_; }

 private:
  CostModelOptions options_;
  std::unique_ptr<xgb::Booster> booster_;
  size_t feature_count_ = 0;
};

}  // namespace kiln::cost_model
