#include "network/choose_template.h"

#include <algorithm>

#include "schedules/conv2d/pixel_blocks.h"
#include "schedules/conv2d/winograd.h"
#include "schedules/registry.h"

namespace kiln::network {

using schedules::Config;
using schedules::ConfigSpace;
using schedules::OpTemplate;
using schedules::Workload;

namespace {

const std::vector<int64_t>* choices_of(const ConfigSpace& space, const std::string& knob) {
  for (const schedules::Knob& k : space.knobs())
    if (k.name == knob) return &k.choices;
  return nullptr;
}

bool offers(const ConfigSpace& space, const std::string& knob, int64_t value) {
  const std::vector<int64_t>* c = choices_of(space, knob);
  return c && std::find(c->begin(), c->end(), value) != c->end();
}

const OpTemplate* template_named_in(const std::vector<const OpTemplate*>& candidates,
                                    const std::string& name) {
  for (const OpTemplate* t : candidates)
    if (t->name() == name) return t;
  return nullptr;
}

// The template for an untuned workload (see the header for why each rule).
const OpTemplate* untuned_template(const Workload& w, const Target& t) {
  std::vector<const OpTemplate*> candidates = schedules::templates_for(w, t);
  if (w.op == "conv2d") {
    if (const OpTemplate* dw = template_named_in(candidates, "conv2d.depthwise")) return dw;
    if (const OpTemplate* dm = template_named_in(candidates, "conv2d.depthwise_mult")) return dm;
    if (schedules::winograd_preferred(w, t))
      if (const OpTemplate* wg = template_named_in(candidates, "conv2d.winograd")) return wg;
    if (schedules::conv2d_1x1_preferred(w))
      if (const OpTemplate* pw = template_named_in(candidates, "conv2d.1x1")) return pw;
  }
  return candidates.front();
}

// Sets a channel-block knob to `block` when the space offers it.
bool take_block(Config& cfg, const ConfigSpace& space, const std::string& knob, Layout block) {
  if (block <= 0 || !cfg.has(knob) || !offers(space, knob, block)) return false;
  cfg.set(knob, block);
  return true;
}

// After the output block (`knob`) changed: narrows reg_n so the register tile (reg_n pixels x
// the block's vectors) holds no more accumulators than the fallback's did; a wider tile
// spills (measured: depthwise c_bn 32 with reg_n 8 is 14% slower than with reg_n 4).
void fit_register_tile(Config& cfg, const Config& fallback, const ConfigSpace& space,
                       const std::string& knob, int64_t lanes) {
  const std::vector<int64_t>* reg_n = choices_of(space, "reg_n");
  if (!reg_n || !fallback.has("reg_n")) return;
  auto vectors = [&](int64_t b) { return std::max<int64_t>(1, (b + lanes - 1) / lanes); };
  const int64_t accumulators = fallback["reg_n"] * vectors(fallback[knob]);
  int64_t best = 0;
  for (int64_t r : *reg_n)
    if (r * vectors(cfg[knob]) <= accumulators && r <= fallback["reg_n"]) best = std::max(best, r);
  if (best > 0) cfg.set("reg_n", best);
}

// The blocked template of a pooling workload whose input is held in `block` (null when the
// op has none or it cannot read that block).
const OpTemplate* blocked_pool_template(const Workload& w, const Target& t, Layout block) {
  static const std::vector<std::string> kPools = {"max_pool2d", "avg_pool2d", "global_avg_pool2d"};
  if (block <= 0 || std::find(kPools.begin(), kPools.end(), w.op) == kPools.end()) return nullptr;
  const OpTemplate* tpl = template_named_in(schedules::templates_for(w, t), w.op + ".nchwc");
  return tpl && offers(tpl->space(w, t), "c_bn", block) ? tpl : nullptr;
}

}  // namespace

std::vector<const OpTemplate*> tuning_templates(const Workload& w, const Target& t) {
  std::vector<const OpTemplate*> all = schedules::templates_for(w, t);
  const OpTemplate* untuned = untuned_template(w, t);
  auto is_depthwise = [](const OpTemplate* tpl) {
    return tpl->name().rfind("conv2d.depthwise", 0) == 0;
  };
  const bool depthwise = is_depthwise(untuned);
  std::vector<const OpTemplate*> out = {untuned};
  for (const OpTemplate* tpl : all)
    if (tpl != untuned && (!depthwise || is_depthwise(tpl))) out.push_back(tpl);
  return out;
}

tuner::Dispatch choose_template(const Workload& w, const Target& t, const tuner::HistoryBest& h,
                                const NeighbourLayouts& n) {
  tuner::Dispatch d = h.dispatch(w, t);
  if (!d.untuned) return d;
  if (const OpTemplate* pool = blocked_pool_template(w, t, n.input)) {
    d.tpl = pool;
    d.config = pool->fallback(w, t);
    d.config.set("c_bn", n.input);
    return d;
  }
  d.tpl = untuned_template(w, t);
  d.config = d.tpl->fallback(w, t);
  if (w.op != "conv2d") return d;
  const ConfigSpace space = d.tpl->space(w, t);
  const Config fallback = d.config;
  const int64_t lanes = t.lanes(ir::DataType::f32());
  if (d.config.has("c_bn")) {  // one block for input and output (depthwise)
    if (take_block(d.config, space, "c_bn", n.input))
      fit_register_tile(d.config, fallback, space, "c_bn", lanes);
  } else {
    take_block(d.config, space, "ic_bn", n.input);
    if (take_block(d.config, space, "oc_bn", n.residual))
      fit_register_tile(d.config, fallback, space, "oc_bn", lanes);
  }
  return d;
}

}  // namespace kiln::network
