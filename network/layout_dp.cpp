#include "network/layout_dp.h"

#include <cmath>
#include <limits>
#include <set>

#include "compiler/base/error.h"

namespace kiln::network {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Which call writes each value (-1: a graph input).
std::vector<int> producers(const LayoutProblem& p) {
  std::vector<int> out(p.values.size(), -1);
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const int v = p.calls[c].output;
    internal_check(v >= 0 && v < static_cast<int>(p.values.size()))
        << "layout problem: call " << p.calls[c].name << " writes no known value";
    out[v] = static_cast<int>(c);
  }
  return out;
}

double convert(const LayoutProblem& p, int value, Layout from, Layout to) {
  return from == to ? 0 : p.conversion_s(value, from, to);
}

// A call's own part of the tree DP: its time, the conversion of a graph input it reads first,
// and of a graph output it writes in a blocked layout.
double own_cost(const LayoutProblem& p, const std::vector<int>& producer, size_t c, size_t s) {
  const LayoutCall& call = p.calls[c];
  const LayoutState& st = call.states[s];
  double cost = st.cost_s;
  if (!call.inputs.empty() && producer[call.inputs[0]] < 0)
    cost += convert(p, call.inputs[0], 0, st.inputs[0]);
  if (p.values[call.output].graph_output) cost += convert(p, call.output, st.output, 0);
  return cost;
}

// Step 1 of the header: the tree DP along each call's first input.
std::vector<size_t> tree_dp(const LayoutProblem& p, const std::vector<int>& producer) {
  const size_t n = p.calls.size();
  std::vector<int> parent(n, -1);
  std::vector<std::vector<size_t>> children(n);
  for (size_t c = 0; c < n; ++c) {
    if (p.calls[c].inputs.empty()) continue;
    const int from = producer[p.calls[c].inputs[0]];
    internal_check(from < static_cast<int>(c))
        << "layout problem: call " << p.calls[c].name << " reads a value written after it";
    if (from < 0) continue;
    parent[c] = from;
    children[from].push_back(c);
  }
  // The cost of child `c` in state `s` given its parent's output layout.
  auto edge = [&](size_t c, size_t s, Layout parent_out) {
    return convert(p, p.calls[c].inputs[0], parent_out, p.calls[c].states[s].inputs[0]);
  };
  std::vector<std::vector<double>> table(n);
  for (size_t c = n; c-- > 0;) {
    const LayoutCall& call = p.calls[c];
    table[c].resize(call.states.size());
    for (size_t s = 0; s < call.states.size(); ++s) {
      double cost = own_cost(p, producer, c, s);
      for (size_t child : children[c]) {
        double best = kInf;
        for (size_t cs = 0; cs < p.calls[child].states.size(); ++cs)
          best = std::min(best, edge(child, cs, call.states[s].output) + table[child][cs]);
        cost += best;
      }
      table[c][s] = cost;
    }
  }
  std::vector<size_t> pick(n, 0);
  for (size_t c = 0; c < n; ++c) {
    double best = kInf;
    for (size_t s = 0; s < p.calls[c].states.size(); ++s) {
      const double cost =
          table[c][s] +
          (parent[c] < 0 ? 0 : edge(c, s, p.calls[parent[c]].states[pick[parent[c]]].output));
      if (cost < best) best = cost, pick[c] = s;
    }
  }
  return pick;
}

}  // namespace

LayoutSolution evaluate_layouts(const LayoutProblem& p, const std::vector<size_t>& states) {
  const std::vector<int> producer = producers(p);
  LayoutSolution out;
  out.states = states;
  // The layouts each value is read in (and the logical one for a graph output).
  std::vector<std::set<Layout>> needed(p.values.size());
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const LayoutState& st = p.calls[c].states[states[c]];
    out.cost_s += st.cost_s;
    for (size_t i = 0; i < p.calls[c].inputs.size(); ++i)
      needed[p.calls[c].inputs[i]].insert(st.inputs[i]);
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    if (p.values[v].graph_output) needed[v].insert(0);
    const Layout have =
        producer[v] < 0 ? 0 : p.calls[producer[v]].states[states[producer[v]]].output;
    for (Layout l : needed[v]) {
      if (l == have) continue;
      out.conversion_s += p.conversion_s(static_cast<int>(v), have, l);
      ++out.conversions;
    }
  }
  out.cost_s += out.conversion_s;
  return out;
}

LayoutSolution solve_layouts(const LayoutProblem& p) {
  for (const LayoutCall& c : p.calls) {
    internal_check(!c.states.empty()) << "layout problem: call " << c.name << " has no state";
    for (const LayoutState& s : c.states)
      internal_check(s.inputs.size() == c.inputs.size())
          << "layout problem: a state of " << c.name << " has the wrong number of inputs";
  }
  const std::vector<int> producer = producers(p);
  LayoutSolution best = evaluate_layouts(p, tree_dp(p, producer));
  // Step 2 of the header: moves of one call, then of two neighbours together, while a move
  // lowers the total. A relative margin keeps equal costs from making the search cycle.
  auto try_states = [&](std::vector<size_t> trial) {
    LayoutSolution t = evaluate_layouts(p, trial);
    if (t.cost_s >= best.cost_s * (1 - 1e-9)) return false;
    best = std::move(t);
    return true;
  };
  std::vector<std::pair<size_t, size_t>> neighbours;  // (producer, reader) with choices
  for (size_t c = 0; c < p.calls.size(); ++c)
    for (int v : p.calls[c].inputs)
      if (const int from = producer[v];
          from >= 0 && p.calls[from].states.size() > 1 && p.calls[c].states.size() > 1)
        neighbours.emplace_back(from, c);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t c = 0; c < p.calls.size(); ++c)
      for (size_t s = 0; s < p.calls[c].states.size(); ++s) {
        std::vector<size_t> trial = best.states;
        trial[c] = s;
        moved |= try_states(trial);
      }
    for (const auto& [a, b] : neighbours)
      for (size_t sa = 0; sa < p.calls[a].states.size(); ++sa)
        for (size_t sb = 0; sb < p.calls[b].states.size(); ++sb) {
          std::vector<size_t> trial = best.states;
          trial[a] = sa;
          trial[b] = sb;
          moved |= try_states(trial);
        }
  }
  return best;
}

}  // namespace kiln::network
