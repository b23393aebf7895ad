#include "tests/cost_model/measured_data.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/base/error.h"

namespace kiln::testing {

using nlohmann::json;

std::string to_json_line(const MeasuredConfig& m) {
  json j;
  j["template"] = m.template_name;
  // The measured sets are conv and dense workloads: integer parameters only.
  std::map<std::string, int64_t> params;
  for (const auto& [k, v] : m.workload.params) params[k] = v.integer(k);
  j["workload"] = {{"op", m.workload.op},
                   {"params", params},
                   {"dtype", m.workload.dtype.str()},
                   {"epilogue", m.workload.epilogue}};
  j["target"] = m.target;
  j["threads"] = m.threads;
  j["config"] = m.config.values();
  j["gflops"] = m.gflops;
  j["gflops_passes"] = m.gflops_passes;
  j["median_ms"] = m.median_ms;
  return j.dump();
}

namespace {

MeasuredConfig parse_line(const json& j) {
  MeasuredConfig m;
  m.template_name = j.at("template").get<std::string>();
  const json& w = j.at("workload");
  m.workload.op = w.at("op").get<std::string>();
  for (const auto& [k, v] : w.at("params").get<std::map<std::string, int64_t>>())
    m.workload.params[k] = v;
  m.workload.dtype = ir::parse_data_type(w.at("dtype").get<std::string>());
  if (w.contains("epilogue")) m.workload.epilogue = w["epilogue"].get<std::vector<std::string>>();
  m.target = j.at("target").get<std::string>();
  m.threads = j.value("threads", 1);
  m.config = schedules::Config(j.at("config").get<std::map<std::string, int64_t>>());
  m.gflops = j.at("gflops").get<double>();
  m.gflops_passes = j.value("gflops_passes", std::vector<double>{});
  m.median_ms = j.value("median_ms", 0.0);
  return m;
}

}  // namespace

std::vector<MeasuredConfig> read_measured_configs(const std::string& path) {
  std::ifstream in(path);
  user_check(in.good()) << "cannot open measured configs file " << path;
  std::vector<MeasuredConfig> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    user_check(!j.is_discarded() && j.is_object())
        << path << ":" << number << ": not a JSON object";
    try {
      out.push_back(parse_line(j));
    } catch (const json::exception& e) {
      user_error() << path << ":" << number << ": not a measured config (" << e.what() << ")";
    }
  }
  return out;
}

}  // namespace kiln::testing
