// How well a cost model orders configs: Spearman's rank correlation between predicted
// scores and measured throughputs (1: same order, 0: unrelated, -1: reversed). Only the
// order matters, so ranking scores and GFLOPS compare directly.
#pragma once

#include <vector>

namespace kiln::cost_model {

// Ranks 1..n with ties given the mean of the ranks they span.
std::vector<double> ranks(const std::vector<double>& values);
// UserError when the lengths differ or fewer than 2 values; 0 when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kiln::cost_model
