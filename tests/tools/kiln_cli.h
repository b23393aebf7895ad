// Running the `kiln` binary in tests as a user runs it (KILN_BIN, output and status captured),
// and reading back the logs it writes.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/kiln_binary.h"
#include "tuner/records.h"

namespace kiln::tools::test {

using Output = kiln::test::KilnOutput;

inline Output run(const std::string& args) {
  return kiln::test::run_kiln(args);
}

inline size_t line_count(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Every line a valid record; returns them.
inline std::vector<tuner::TuningRecord> valid_log(const std::string& path) {
  tuner::LoadedRecords loaded = tuner::load_records({path});
  for (const tuner::RecordProblem& p : loaded.problems) ADD_FAILURE() << p.str();
  return loaded.records;
}

}  // namespace kiln::tools::test
