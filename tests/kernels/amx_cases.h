// What the AMX template tests share: a case is a workload and a config (the fallback or a
// random config of the space), printed and named the same way; the run tests need a host
// with AMX bf16 and skip with this message elsewhere.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "schedules/op_template.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {

struct AmxCase {
  schedules::Workload w;
  int config;  // -1: fallback; otherwise a random config of the space
};

inline void PrintTo(const AmxCase& c, std::ostream* os) { *os << c.w.str() << " config " << c.config; }

inline std::string amx_case_name(const ::testing::TestParamInfo<AmxCase>& info) {
  const AmxCase& c = info.param;
  return test_name(c.w.str() + "_" + (c.config < 0 ? "fallback" : "cfg" + std::to_string(c.config)),
                   info.index);
}

inline constexpr const char* kNoAmx = "this CPU has no AMX bf16 (amx-tile, amx-bf16)";

}  // namespace kiln::testing
