// The joint layout solver (network/layout_dp.h) on hand-made problems: along a chain
// it trades a faster kernel against the conversions it causes, a conversion read by two
// calls in one layout is counted once, and on random small graphs with joins (residual adds)
// it matches the brute-force optimum.
#include <gtest/gtest.h>

#include <random>

#include "network/layout_dp.h"

namespace kiln::network {
namespace {

// Conversions cost `per` each, whatever the value and layouts.
LayoutProblem with_conversion_cost(double per) {
  LayoutProblem p;
  p.conversion_s = [per](int, Layout, Layout) { return per; };
  return p;
}

int add_value(LayoutProblem& p, bool graph_output = false) {
  p.values.push_back({"v" + std::to_string(p.values.size()), {1, 32, 8, 8}, graph_output});
  return static_cast<int>(p.values.size()) - 1;
}

// A conv-like call: in state s it reads and writes `blocks[s]` and takes `costs[s]`.
void add_call(LayoutProblem& p, std::vector<int> inputs, int output, std::vector<Layout> blocks,
              std::vector<double> costs) {
  LayoutCall c;
  c.name = "c" + std::to_string(p.calls.size());
  c.inputs = std::move(inputs);
  c.output = output;
  for (size_t s = 0; s < blocks.size(); ++s)
    c.states.push_back({std::vector<Layout>(c.inputs.size(), blocks[s]), blocks[s], costs[s]});
  p.calls.push_back(std::move(c));
}

TEST(LayoutDp, ChainTakesEachLayersFasterBlockWhenConversionsAreCheap) {
  LayoutProblem p = with_conversion_cost(0.1);
  int v = add_value(p);
  // Layer costs per block {8, 16}: 16 is clearly better for layers 0 and 2, 8 for layer 1.
  const std::vector<std::vector<double>> costs = {{5, 1}, {1, 5}, {5, 1}};
  for (size_t l = 0; l < costs.size(); ++l) {
    const int out = add_value(p, l + 1 == costs.size());
    add_call(p, {v}, out, {8, 16}, costs[l]);
    v = out;
  }
  LayoutSolution s = solve_layouts(p);
  EXPECT_EQ(s.states, (std::vector<size_t>{1, 0, 1}));
  // Input 0->16, 16->8, 8->16, 16->0 at the output.
  EXPECT_EQ(s.conversions, 4);
  EXPECT_NEAR(s.cost_s, 3 + 0.4, 1e-12);
}

TEST(LayoutDp, ChainKeepsOneBlockWhenConversionsCostMoreThanTheyWin) {
  LayoutProblem p = with_conversion_cost(3);
  int v = add_value(p);
  const std::vector<std::vector<double>> costs = {{5, 1}, {2, 3}, {5, 1}};
  for (size_t l = 0; l < costs.size(); ++l) {
    const int out = add_value(p, l + 1 == costs.size());
    add_call(p, {v}, out, {8, 16}, costs[l]);
    v = out;
  }
  LayoutSolution s = solve_layouts(p);
  EXPECT_EQ(s.states, (std::vector<size_t>{1, 1, 1}));  // layer 1 gives up 1 to save 6
  EXPECT_EQ(s.conversions, 2);
}

TEST(LayoutDp, AConversionReadByTwoCallsIsCountedOnce) {
  LayoutProblem p = with_conversion_cost(1);
  const int x = add_value(p), a = add_value(p), b = add_value(p, true), c = add_value(p, true);
  add_call(p, {x}, a, {16}, {1});
  add_call(p, {a}, b, {8}, {1});
  add_call(p, {a}, c, {8}, {1});
  LayoutSolution s = evaluate_layouts(p, {0, 0, 0});
  // x to 16; a from 16 to 8 once for both readers; b and c back to NCHW.
  EXPECT_EQ(s.conversions, 4);
  EXPECT_NEAR(s.conversion_s, 4, 1e-12);
}

// Random graphs of 2-3 blocks per call with residual joins (an add reading the block input
// and the branch), against every assignment.
TEST(LayoutDp, MatchesBruteForceOnSmallGraphsWithJoins) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> cost(0.5, 3);
  int exact = 0;
  for (int trial = 0; trial < 40; ++trial) {
    LayoutProblem p;
    std::map<std::pair<Layout, Layout>, double> conv;
    p.conversion_s = [&conv, &rng](int, Layout from, Layout to) {
      auto [it, inserted] = conv.try_emplace({from, to}, 0.0);
      if (inserted) it->second = std::uniform_real_distribution<double>(0.2, 2)(rng);
      return it->second;
    };
    const std::vector<Layout> blocks = {8, 16, 32};
    int v = add_value(p);
    for (int block = 0; block < 2; ++block) {
      const int in = v, mid = add_value(p), out = add_value(p, block == 1);
      add_call(p, {in}, mid, blocks, {cost(rng), cost(rng), cost(rng)});
      add_call(p, {mid, in}, out, blocks, {cost(rng), cost(rng), cost(rng)});  // conv + residual
      v = out;
    }
    LayoutSolution s = solve_layouts(p);
    double best = INFINITY;
    std::vector<size_t> states(p.calls.size(), 0);
    for (int i = 0; i < 81; ++i) {
      for (size_t c = 0, r = i; c < states.size(); ++c, r /= 3) states[c] = r % 3;
      best = std::min(best, evaluate_layouts(p, states).cost_s);
    }
    EXPECT_NEAR(evaluate_layouts(p, s.states).cost_s, s.cost_s, 1e-12);
    EXPECT_LE(s.cost_s, best * 1.15) << "trial " << trial;
    exact += s.cost_s <= best + 1e-12;
  }
  std::printf("solver optimal on %d of 40 random graphs with joins\n", exact);
  EXPECT_GE(exact, 32);
}

}  // namespace
}  // namespace kiln::network
