// Replays the model-based search on configs already measured, to judge the cost model's
// choices without the noise of new timings.
//
// A log of many random trials of one task (tune_bench's TASK.random1000.jsonl) is a pool of
// configs whose speeds are known. The replay runs the search as the xgb tuner does, but
// inside that pool: a first batch at random, then each batch the configs the model ranks
// highest among those not yet "measured" (plus a share at random, the tuner's epsilon),
// re-fitting after every batch on what was measured so far. It reports how many trials it
// took to reach a share of the pool's best, over many seeds, against random order (its
// expectation, and the pool shuffled once per seed). The pool is a thousand configs, not the space,
// and the annealing walk is left out: this measures the model and its features, not the walk. With
// --transfer, other tasks' logs pre-train the model as `kiln tune --transfer` does, and the first
// batch is already the model's.
//
//   search_replay LOG... [--seeds 20] [--batch 16] [--epsilon 0.05] [--share 0.95]
//                 [--features ir|knob] [--objective rank|reg] [--rounds 100]
//                 [--depth 3] [--eta 0.3] [--window 64] [--near 0.9] [--transfer LOG]...
//
// Prints per log: the pool; trials to the share of its best, random order's expectation
// against the model's mean and median, and how many seeds needed at most half random's; and
// how many configs near the best (--near) each measured in its first --window trials.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cost_model/cost_model.h"
#include "cost_model/ir_features.h"
#include "cost_model/knob_features.h"
#include "schedules/registry.h"
#include "tuner/builder.h"
#include "tuner/records.h"
#include "tuner/transfer.h"

namespace {

using namespace kiln;

struct Options {
  std::vector<std::string> logs;
  int seeds = 20;
  size_t batch = 16;
  double epsilon = 0.05;
  double share = 0.95;
  size_t window = 64;       // trials over which to count the configs near the best
  double near_share = 0.9;  // "near the best": at least this share of it
  std::string features = "ir";
  std::vector<std::string> priors;  // logs of other tasks to pre-train on (--transfer)
  cost_model::CostModelOptions model;
};

struct Pool {
  std::vector<std::vector<float>> features;
  std::vector<double> gflops;  // 0 for a config that failed or was wrong
  double best = 0;
};

// The log's distinct configs (first measurement of each), with their features.
Pool read_pool(const std::string& path, const Options& o, std::string* template_name) {
  tuner::LoadedRecords loaded = tuner::load_records({path});
  std::map<std::string, tuner::TuningRecord> first;
  for (tuner::TuningRecord& r : loaded.records)
    if (r.result.message != tuner::kRemeasured) first.emplace(r.config.to_json(), std::move(r));
  std::vector<tuner::TuningRecord> records;
  for (auto& [key, r] : first) records.push_back(std::move(r));
  if (records.empty()) throw std::runtime_error(path + ": no measured configs");
  *template_name = records.front().template_name;

  Pool pool;
  pool.features.resize(records.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < records.size(); i = next++) {
      const tuner::TuningRecord& r = records[i];
      const schedules::OpTemplate& tpl = schedules::template_named(r.template_name);
      try {
        pool.features[i] =
            o.features == "ir"
                ? cost_model::ir_features(
                      tuner::lower_template(tpl, r.workload, r.target, r.config, "replay").func)
                : cost_model::knob_features(tpl.space(r.workload, r.target), r.config);
      } catch (const std::exception&) {
        // A config the template no longer lowers: left out of the pool below.
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  Pool kept;
  for (size_t i = 0; i < records.size(); ++i) {
    if (pool.features[i].empty()) continue;
    kept.features.push_back(std::move(pool.features[i]));
    kept.gflops.push_back(records[i].gflops());
  }
  pool = std::move(kept);
  if (pool.gflops.empty()) throw std::runtime_error(path + ": no config of it lowers today");
  pool.best = *std::max_element(pool.gflops.begin(), pool.gflops.end());
  return pool;
}

// Trials until a config of at least `goal` GFLOPS is measured, in the order `order` gives.
size_t trials_to(const std::vector<size_t>& order, const Pool& pool, double goal) {
  for (size_t i = 0; i < order.size(); ++i)
    if (pool.gflops[order[i]] >= goal) return i + 1;
  return order.size() + 1;
}

// The order in which the model-based search measures the pool.
// `prior`: other tasks' samples to pre-train on (empty for none).
std::vector<size_t> model_order(const Pool& pool, const tuner::PriorSamples& prior,
                                const Options& o, uint64_t seed, double goal) {
  std::mt19937_64 rng(seed);
  std::vector<size_t> unseen(pool.gflops.size());
  std::iota(unseen.begin(), unseen.end(), 0);
  std::shuffle(unseen.begin(), unseen.end(), rng);
  std::vector<size_t> order;
  auto take_random = [&](size_t n) {
    for (size_t i = 0; i < n && !unseen.empty(); ++i) {
      order.push_back(unseen.back());
      unseen.pop_back();
    }
  };
  // Without a prior the first batch is random: there is nothing to fit on yet.
  if (prior.x.empty()) take_random(o.batch);
  cost_model::CostModelOptions mo = o.model;
  mo.seed = seed;
  while (!unseen.empty()) {
    // Stop once the goal is met and the window is full: the rest no longer matters.
    if (order.size() >= o.window && trials_to(order, pool, goal) <= order.size()) return order;
    // One group per prior task and one for this task's measurements, as the tuner fits them.
    cost_model::FeatureRows x = prior.x;
    std::vector<double> y(prior.y.begin(), prior.y.end());
    std::vector<uint32_t> groups;
    for (uint32_t g = 0; g < prior.groups.size(); ++g)
      groups.insert(groups.end(), prior.groups[g], g);
    double best = 0;
    for (size_t i : order) best = std::max(best, pool.gflops[i]);
    for (size_t i : order) {
      x.push_back(pool.features[i]);
      y.push_back(best > 0 ? pool.gflops[i] / best : 0);
      groups.push_back(prior.groups.size());
    }
    cost_model::CostModel model(mo);
    model.fit(x, y, groups);
    cost_model::FeatureRows candidates;
    for (size_t i : unseen) candidates.push_back(pool.features[i]);
    std::vector<double> score = model.predict(candidates);
    std::vector<size_t> rank(unseen.size());
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    const size_t exploit = o.batch - static_cast<size_t>(std::round(o.epsilon * o.batch));
    std::vector<bool> taken(unseen.size(), false);
    for (size_t r = 0; r < exploit && r < rank.size(); ++r) {
      order.push_back(unseen[rank[r]]);
      taken[rank[r]] = true;
    }
    std::vector<size_t> rest;
    for (size_t i = 0; i < unseen.size(); ++i)
      if (!taken[i]) rest.push_back(unseen[i]);
    unseen = std::move(rest);  // still shuffled: its back is a random point
    take_random(o.batch - std::min(exploit, o.batch));
  }
  return order;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void replay(const std::string& log, const Options& o) {
  std::string template_name;
  const Pool pool = read_pool(log, o, &template_name);
  // The samples `kiln tune --transfer` pre-trains on.
  const tuner::PriorSamples prior =
      o.priors.empty()
          ? tuner::PriorSamples{}
          : tuner::transfer_samples(o.priors, schedules::template_named(template_name), o.features);
  const double goal = o.share * pool.best;
  const size_t hits =
      std::count_if(pool.gflops.begin(), pool.gflops.end(), [&](double g) { return g >= goal; });
  const double near = o.near_share * pool.best;
  const size_t near_hits =
      std::count_if(pool.gflops.begin(), pool.gflops.end(), [&](double g) { return g >= near; });
  std::vector<double> random_trials, model_trials, model_near;
  for (int s = 0; s < o.seeds; ++s) {
    std::vector<size_t> order(pool.gflops.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(1000 + s);
    std::shuffle(order.begin(), order.end(), rng);
    random_trials.push_back(trials_to(order, pool, goal));
    const std::vector<size_t> model = model_order(pool, prior, o, s, goal);
    model_trials.push_back(trials_to(model, pool, goal));
    model_near.push_back(std::count_if(model.begin(),
                                       model.begin() + std::min(o.window, model.size()),
                                       [&](size_t i) { return pool.gflops[i] >= near; }));
  }
  // Random order's expectations: trials to the first of k hits among n, (n + 1) / (k + 1);
  // hits within the window, window * k / n.
  const double n = pool.gflops.size();
  const double random_expected = (n + 1) / (hits + 1);
  const double random_near = std::min<double>(o.window, n) * near_hits / n;
  const double half = random_expected / 2;
  const int within =
      std::count_if(model_trials.begin(), model_trials.end(), [&](double t) { return t <= half; });
  std::printf("%s: %zu configs of best %.1f GFLOPS, %zu at >= %.0f%%\n", log.c_str(),
              pool.gflops.size(), pool.best, hits, o.share * 100);
  std::printf(
      "  trials to %.0f%%: random %.1f expected (%.1f mean, %.0f median of the seeds),"
      " model %.1f mean, %.0f median; model <= half random's: %d of %d seeds\n",
      o.share * 100, random_expected, mean(random_trials), median(random_trials),
      mean(model_trials), median(model_trials), within, o.seeds);
  std::printf(
      "  configs >= %.0f%% in the first %zu trials: random %.1f expected, model %.1f mean\n",
      o.near_share * 100, o.window, random_near, mean(model_near));
}

int usage() {
  std::fprintf(stderr,
               "usage: search_replay LOG... [--seeds N] [--batch N] [--epsilon E] [--share S]"
               " [--features ir|knob] [--objective rank|reg] [--rounds N] [--depth N]"
               " [--eta E] [--window N] [--near S] [--transfer LOG]...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        o.logs.push_back(a);
        continue;
      }
      if (i + 1 >= argc) return usage();
      const std::string v = argv[++i];
      if (a == "--seeds")
        o.seeds = std::stoi(v);
      else if (a == "--batch")
        o.batch = std::stoul(v);
      else if (a == "--epsilon")
        o.epsilon = std::stod(v);
      else if (a == "--share")
        o.share = std::stod(v);
      else if (a == "--window")
        o.window = std::stoul(v);
      else if (a == "--near")
        o.near_share = std::stod(v);
      else if (a == "--features")
        o.features = v;
      else if (a == "--transfer")
        o.priors.push_back(v);
      else if (a == "--objective" && (v == "rank" || v == "reg"))
        o.model.objective =
            v == "reg" ? cost_model::Objective::SquaredError : cost_model::Objective::RankPairwise;
      else if (a == "--rounds")
        o.model.rounds = std::stoi(v);
      else if (a == "--depth")
        o.model.max_depth = std::stoi(v);
      else if (a == "--eta")
        o.model.eta = std::stod(v);
      else
        return usage();
    }
  } catch (const std::exception&) {  // a value that is not a number
    return usage();
  }
  if (o.logs.empty() || o.seeds < 1 || o.batch < 1) return usage();
  if (o.features != "ir" && o.features != "knob") return usage();
  try {
    for (const std::string& log : o.logs) replay(log, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_replay: %s\n", e.what());
    return 1;
  }
  return 0;
}
