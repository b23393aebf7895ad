#include "cost_model/loop_nest.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cost_model/affine.h"
#include "compiler/ir/bounds.h"
#include "compiler/ir/op.h"
#include "compiler/ir/substitute.h"

namespace kiln::cost_model {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The loops of the main chain, outermost first (indices into tree.loops).
std::vector<int> main_chain(const LoopTree& tree) {
  auto heaviest = [&](const std::vector<int>& candidates) {
    int best = -1;
    for (int c : candidates)
      if (best < 0 || tree.loops[c].work > tree.loops[best].work) best = c;
    return best;
  };
  std::vector<int> top;
  for (size_t i = 0; i < tree.loops.size(); ++i)
    if (tree.loops[i].parent < 0) top.push_back(static_cast<int>(i));
  std::vector<int> chain;
  for (int l = heaviest(top); l >= 0; l = heaviest(tree.loops[l].children)) chain.push_back(l);
  return chain;
}

// The loops from an access's innermost one up to (and including) `level`, innermost first;
// empty when the access is not inside `level`.
std::vector<int> path_to(const LoopTree& tree, const AccessSite& site, int level) {
  std::vector<int> path;
  for (int l = site.loop; l >= 0; l = tree.loops[l].parent) {
    path.push_back(l);
    if (l == level) return path;
  }
  return {};
}

double innermost_stride(const LoopTree& tree, const AccessSite& site) {
  if (const auto* ramp = site.index.as<ir::RampNode>()) {
    std::optional<int64_t> s = ir::as_const_int(ramp->stride);
    return s ? static_cast<double>(*s) : kNaN;
  }
  if (site.index.as<ir::BroadcastNode>()) return 0;
  if (site.index.type().is_vector()) return kNaN;  // a gather or scatter
  if (site.loop < 0) return 0;
  std::optional<int64_t> c = linear_coefficient(site.index, tree.loops[site.loop].var);
  return c ? static_cast<double>(*c) : kNaN;
}

// What one access contributes to one level.
struct SiteSpan {
  double runs = 0;       // executions per run of the level's loop
  bool bounded = false;  // lo/hi are known
  int64_t lo = 0, hi = 0;
  double distinct = 0;  // distinct elements it touches, at most
};

SiteSpan span_in_level(const LoopTree& tree, const AccessSite& site, int level,
                       const std::vector<int>& path) {
  const LoopRecord& l = tree.loops[level];
  SiteSpan s;
  s.runs = l.outer_trips > 0 ? site.executions / l.outer_trips : 0;
  // Loops inside the level range over their iterations; loops around it stay at their
  // first iteration (the span of one run does not depend on which run it is).
  ir::BoundMap bounds;
  double distinct = 1;
  for (int p : path) {
    const LoopRecord& r = tree.loops[p];
    bounds[r.var] = {r.min, r.min + std::max<int64_t>(0, r.extent - 1)};
    std::optional<int64_t> c = linear_coefficient(site.index, r.var);
    if (!c || *c != 0) distinct *= static_cast<double>(r.extent);
  }
  for (int a = l.parent; a >= 0; a = tree.loops[a].parent)
    bounds[tree.loops[a].var] = ir::IntBound::single(tree.loops[a].min);
  const auto* ramp = site.index.as<ir::RampNode>();
  bool lanes_apart = site.index.type().is_vector() && !site.index.as<ir::BroadcastNode>() &&
                     !(ramp && ir::is_zero(ramp->stride));
  s.distinct = distinct * (lanes_apart ? site.lanes : 1);
  ir::IntBound b = ir::const_int_bound(site.index, bounds);
  s.bounded = b.bounded();
  s.lo = b.min;
  s.hi = b.max;
  return s;
}

// Distinct elements covered by the union of closed intervals.
double union_length(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  int64_t cur_lo = 0, cur_hi = -1;
  bool open = false;
  for (auto [lo, hi] : intervals) {
    if (open && lo <= cur_hi + 1) {
      cur_hi = std::max(cur_hi, hi);
      continue;
    }
    if (open) total += static_cast<double>(cur_hi - cur_lo + 1);
    cur_lo = lo, cur_hi = hi, open = true;
  }
  if (open) total += static_cast<double>(cur_hi - cur_lo + 1);
  return total;
}

std::vector<LevelBufferStats> level_stats(const LoopTree& tree, int level,
                                          const std::vector<double>& site_strides) {
  const size_t nbuf = tree.buffers.size();
  std::vector<LevelBufferStats> out(nbuf);
  std::vector<double> bytes(nbuf, 0), distinct(nbuf, 0), heaviest(nbuf, -1);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> intervals(nbuf);
  std::vector<bool> all_bounded(nbuf, true);
  const ir::VarNode* var = tree.loops[level].var;

  for (size_t i = 0; i < tree.sites.size(); ++i) {
    const AccessSite& site = tree.sites[i];
    std::vector<int> path = path_to(tree, site, level);
    if (path.empty()) continue;
    SiteSpan span = span_in_level(tree, site, level, path);
    const int b = site.buffer;
    LevelBufferStats& st = out[b];
    st.accessed = true;
    st.accesses += span.runs;
    bytes[b] += span.runs * site.lanes * tree.buffers[b].dtype.bytes();
    distinct[b] += span.distinct;
    if (span.bounded)
      intervals[b].push_back({span.lo, span.hi});
    else
      all_bounded[b] = false;
    if (span.runs > heaviest[b]) {
      heaviest[b] = span.runs;
      std::optional<int64_t> c = linear_coefficient(site.index, var);
      st.loop_stride = c ? static_cast<double>(*c) : kNaN;
      st.innermost_stride = site_strides[i];
    }
  }
  for (size_t b = 0; b < nbuf; ++b) {
    if (!out[b].accessed) continue;
    // Strided or partly overlapping accesses cover less than their interval: the smaller
    // of the two estimates is the better one.
    double elements = distinct[b];
    if (all_bounded[b]) elements = std::min(elements, union_length(intervals[b]));
    out[b].touched_bytes = elements * tree.buffers[b].dtype.bytes();
    out[b].reuse = out[b].touched_bytes > 0 ? bytes[b] / out[b].touched_bytes : 0;
  }
  return out;
}

}  // namespace

LoopNestSummary summarize_loop_nest(const ir::LoweredFunc& f) {
  LoopTree tree = build_loop_tree(f);
  std::vector<double> site_strides;
  site_strides.reserve(tree.sites.size());
  for (const AccessSite& s : tree.sites) site_strides.push_back(innermost_stride(tree, s));

  LoopNestSummary out;
  for (int l : main_chain(tree)) {
    const LoopRecord& r = tree.loops[l];
    LoopLevel level;
    level.var = r.var->name;
    level.extent = r.extent;
    level.kind = r.kind;
    level.body_stores = r.body_stores;
    level.trips = r.outer_trips * static_cast<double>(r.extent);
    level.buffers = level_stats(tree, l, site_strides);
    out.levels.push_back(std::move(level));
  }
  out.buffers = std::move(tree.buffers);
  out.totals = tree.totals;
  return out;
}

}  // namespace kiln::cost_model
