#include "tuner/search/xgb_score_model.h"

namespace kiln::tuner {

void XgbScoreModel::fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
                        const std::vector<uint32_t>& groups) {
  // Consecutive group sizes to one group id per row.
  std::vector<uint32_t> ids;
  for (uint32_t g = 0; g < groups.size(); ++g) ids.insert(ids.end(), groups[g], g);
  if (ids.size() != x.size()) ids.clear();  // no or inconsistent groups: one group
  model_.fit(x, std::vector<double>(y.begin(), y.end()), ids);
  pretrained_ = false;  // its own samples from now on
}

std::vector<float> XgbScoreModel::predict(const std::vector<std::vector<float>>& x) {
  if (pretrained_ && !x.empty() && x.front().size() != model_.feature_count()) {
    // A saved model of other features (another feature set or kiln version): it cannot
    // rank these points, so it is dropped and the batch is as good as random.
    pretrained_ = false;
    return std::vector<float>(x.size(), 0.0f);
  }
  std::vector<double> p = model_.predict(x);
  return {p.begin(), p.end()};
}

}  // namespace kiln::tuner
