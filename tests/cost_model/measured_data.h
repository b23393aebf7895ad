// The measured-configs test data of tests/cost_model/data: one JSON object per line, each a
// config of a template measured on a machine, e.g.
//   {"template":"dense.packed","workload":{"op":"dense","params":{"K":768,"M":128,"N":768},
//    "dtype":"f32"},"target":"x86-avx512","threads":1,"config":{"mr":6,...},
//    "gflops":61.2,"gflops_passes":[60.9,61.2],"median_ms":2.47}
// make_dense_data writes these files and the ranking test reads them; this is the one
// place that knows the format.
#pragma once

#include <string>
#include <vector>

#include "schedules/op_template.h"

namespace kiln::testing {

struct MeasuredConfig {
  std::string template_name;
  schedules::Workload workload;
  std::string target;
  int threads = 1;
  schedules::Config config;
  double gflops = 0;                  // the best of the passes: the least disturbed run
  std::vector<double> gflops_passes;  // each pass's median, in pass order
  double median_ms = 0;               // the median time of the best pass
};

std::string to_json_line(const MeasuredConfig& m);
// Throws UserError naming the file and line when a line is not a measured config.
std::vector<MeasuredConfig> read_measured_configs(const std::string& path);

}  // namespace kiln::testing
