// Measures configs of one operator template on this machine and writes them as the cost
// model's test data (tests/cost_model/data/*.jsonl, format in measured_data.h). Not run by
// the test suite: the committed files are its output. For example
//   make_dense_data --shape 128,768,768 --target x86-avx512 --out dense_128x768x768.jsonl
// Every config of the space is measured when it has at most --max-configs of them;
// otherwise a seeded random sample of distinct ones. Each config is measured in --passes
// passes, each pass in its own shuffled order, and keeps its best pass: a timing disturbed
// by another process on a shared machine only ever looks slower.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "compiler/base/error.h"
#include "tests/cost_model/measured_data.h"
#include "schedules/registry.h"
#include "tuner/builder.h"
#include "tuner/check_kernel.h"

using namespace kiln;

namespace {

std::vector<schedules::Config> pick_configs(const schedules::ConfigSpace& space, uint64_t max,
                                            uint64_t seed) {
  std::vector<schedules::Config> out;
  if (space.size() <= max) {
    for (uint64_t i = 0; i < space.size(); ++i) out.push_back(space.at(i));
    return out;
  }
  std::mt19937_64 rng(seed);
  std::set<uint64_t> chosen;
  while (chosen.size() < max) chosen.insert(rng() % space.size());
  for (uint64_t i : chosen) out.push_back(space.at(i));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Measure template configs for the cost model's test data"};
  std::string template_name = "dense.packed", shape, target_name = "x86-avx512", out_path;
  uint64_t max_configs = 400, seed = 1;
  int passes = 2, repeat = 9, threads = 1;
  app.add_option("--template", template_name, "operator template");
  app.add_option("--shape", shape, "dense shape M,N,K")->required();
  app.add_option("--target", target_name, "target preset");
  app.add_option("--out", out_path, "output .jsonl")->required();
  app.add_option("--max-configs", max_configs, "configs to measure at most");
  app.add_option("--passes", passes, "measurements of each config (the best is kept)");
  app.add_option("--repeat", repeat, "timed runs per measurement (their median counts)");
  app.add_option("--threads", threads, "kernel threads");
  app.add_option("--seed", seed, "sampling seed when the space is larger than --max-configs");
  CLI11_PARSE(app, argc, argv);

  try {
    int64_t m = 0, n = 0, k = 0;
    user_check(std::sscanf(shape.c_str(), "%ld,%ld,%ld", &m, &n, &k) == 3)
        << "--shape must be M,N,K, got '" << shape << "'";
    schedules::Workload w;
    w.op = "dense";
    w.params = {{"M", m}, {"N", n}, {"K", k}};
    const schedules::OpTemplate& tpl = schedules::template_named(template_name);
    Target target = target_from_name(target_name);
    std::vector<schedules::Config> configs = pick_configs(tpl.space(w, target), max_configs, seed);
    std::vector<testing::MeasuredConfig> results(configs.size());
    tuner::RunOptions options;
    options.threads = threads;
    options.repeat = repeat;

    std::mt19937_64 rng(seed);
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<size_t> order(configs.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t done = 0; done < order.size(); ++done) {
        size_t i = order[done];
        tuner::BuiltKernel kernel = tuner::lower_template(tpl, w, target, configs[i], "dense_cfg");
        tuner::CheckResult r = tuner::check_built_kernel(tpl, w, target, kernel, options);
        user_check(r.skip_reason.empty()) << "cannot measure here: " << r.skip_reason;
        user_check(r.correct()) << configs[i].to_json() << " is wrong: " << r.comparison.message();
        testing::MeasuredConfig& res = results[i];
        res.gflops_passes.push_back(r.gflops);
        if (r.gflops > res.gflops) res.gflops = r.gflops, res.median_ms = r.median_ms;
        std::cerr << "pass " << pass + 1 << "/" << passes << " " << done + 1 << "/" << order.size()
                  << " " << configs[i].to_json() << " " << r.gflops << " GFLOPS\n";
      }
    }

    std::string tmp = out_path + ".tmp";
    {
      std::ofstream out(tmp);
      for (size_t i = 0; i < configs.size(); ++i) {
        testing::MeasuredConfig& res = results[i];
        res.template_name = template_name;
        res.workload = w;
        res.target = target_name;
        res.threads = threads;
        res.config = configs[i];
        out << testing::to_json_line(res) << '\n';
      }
      user_check(out.good()) << "cannot write " << tmp;
    }
    std::filesystem::rename(tmp, out_path);
    std::cerr << "wrote " << configs.size() << " configs to " << out_path << "\n";
  } catch (const Error& e) {
    std::cerr << "make_dense_data: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
