#include "tuner/search/xgb_score_model.h"

namespace kiln::tuner {

void XgbScoreModel::fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
                        const std::vector<uint32_t>& groups) {
  // Consecutive group sizes to one group id per row.
  std::vector<uint32_t> ids;
  for (uint32_t g = 0; g < groups.size(); ++g) ids.insert(ids.end(), groups[g], g);
  if (ids.size() != x.size()) ids.clear();  // no or inconsistent groups: one group
  model_.fit(x, std::vector<double>(y.begin(), y.end()), ids);
}

std::vector<float> XgbScoreModel::predict(const std::vector<std::vector<float>>& x) {
  std::vector<double> p = model_.predict(x);
  return {p.begin(), p.end()};
}

}  // namespace kiln::tuner
