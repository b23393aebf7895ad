// Shared pieces of the records tests: a temporary folder per test, small file helpers, and
// records of a real task (dense.packed on the x86-avx2 preset, a target that is the same
// on every machine) whose configs are points of the template's current space.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "compiler/target/target.h"
#include "runtime/process/temp_dir.h"
#include "tuner/records.h"

namespace kiln::tuner::testing {

using kiln::TempDir;  // runtime/process/temp_dir.h

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text,
                       std::ios::openmode mode = std::ios::trunc) {
  std::ofstream out(path, std::ios::binary | mode);
  out << text;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct DenseTask {
  Target target = target_from_name("x86-avx2");
  schedules::Workload workload{"dense", {{"M", 64}, {"N", 64}, {"K", 64}}, ir::DataType::f32(), {}};
  std::string template_name = "dense.packed";

  schedules::ConfigSpace space() const {
    return schedules::template_named(template_name).space(workload, target);
  }
  // A record of the config at `index` of the space, with these costs (seconds per call).
  TuningRecord record(uint64_t index, std::vector<double> costs,
                      MeasureErrorKind error = MeasureErrorKind::Ok) const {
    TuningRecord r;
    r.target = target;
    r.template_name = template_name;
    r.workload = workload;
    r.config = space().at(index);
    r.result.costs = std::move(costs);
    r.result.error = error;
    if (error != MeasureErrorKind::Ok) r.result.message = "failed on purpose";
    r.result.all_cost = 0.25;
    r.result.timestamp = 1795000000.5 + static_cast<double>(index);
    r.result.device_key = "local";
    r.flops = 2.0 * 64 * 64 * 64;
    return r;
  }
};

}  // namespace kiln::tuner::testing
