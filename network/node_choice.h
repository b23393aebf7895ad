// The template and config chosen for one node of the network ahead of lowering (the joint
// layout choice, layout_plan.h), which lower_network takes instead of asking
// apply-history-best and the untuned rules of choose_template.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "network/kernel_layout.h"
#include "schedules/config.h"
#include "schedules/op_template.h"

namespace kiln::network {

struct NodeChoice {
  const schedules::OpTemplate* tpl = nullptr;
  schedules::Config config;
  bool untuned = true;
  double cost_s = 0;  // the record's time per call (0 when untuned)
};

// By node key (node_key below).
using NodeChoices = std::map<std::string, NodeChoice>;

// How lowering and the layout plan name a node: its name, else its first output.
inline std::string node_key(const std::string& name, const std::vector<std::string>& outputs) {
  return name.empty() ? outputs.at(0) : name;
}

// The layout_transform workload converting a logical [N, C, H, W] value from one layout to
// another (0: NCHW; b > 0: NCHW[b]c): to blocked, back to NCHW, or re-blocked in one pass.
// `dtype`: the type the value is held in (f16/bf16 inside a --dtype region).
schedules::Workload conversion_workload(const std::vector<int64_t>& nchw, Layout from, Layout to,
                                        ir::DataType dtype = ir::DataType::f32());

}  // namespace kiln::network
