#include "tools/model_profile.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <span>

#include "compiler/base/error.h"
#include "kiln/kernel_abi.h"

namespace kiln::tools {
namespace {

using Clock = std::chrono::steady_clock;

// The hook is a plain function pointer, so the timestamps it writes live here. Profiling is
// one model at a time (kiln run, kiln report), so file-level state is enough.
std::vector<Clock::time_point>* g_stamps = nullptr;
bool g_out_of_range = false;

int32_t record_step(int32_t step) {
  if (step < 0 || static_cast<size_t>(step) >= g_stamps->size()) {
    g_out_of_range = true;
    return 0;
  }
  (*g_stamps)[step] = Clock::now();
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

ModelProfile profile_model(const Model& m, const std::vector<const void*>& inputs,
                           const std::vector<void*>& outputs, size_t steps, int runs) {
  // The runtime has the .so open already; RTLD_NOLOAD returns that handle, not a second copy.
  void* handle = dlopen(m.so_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  user_check(handle != nullptr) << m.so_path() << " is not loaded: " << dlerror();
  auto* hook = reinterpret_cast<kiln_model_step_hook_fn*>(dlsym(handle, KILN_MODEL_STEP_HOOK_SYMBOL));
  dlclose(handle);
  user_check(hook != nullptr) << m.so_path() << " has no " << KILN_MODEL_STEP_HOOK_SYMBOL
                              << " (compiled by an older kiln): recompile it to profile layers";
  std::vector<Clock::time_point> stamps(steps);
  std::vector<std::vector<double>> per_step(steps);
  std::vector<double> totals;
  g_stamps = &stamps;
  g_out_of_range = false;
  // The runtime checks the params through the same hook during a model's first run: check
  // them all now, so that no run below needs it (and the timings hold no hashing).
  m.verify_params();
  const kiln_model_step_hook_fn previous = *hook;
  *hook = record_step;
  try {
    for (int r = 0; r < runs; ++r) {
      Clock::time_point start = Clock::now();
      m.run(std::span<const void* const>(inputs), std::span<void* const>(outputs));
      totals.push_back(ms_between(start, stamps.empty() ? start : stamps.back()));
      for (size_t s = 0; s < steps; ++s)
        per_step[s].push_back(ms_between(s == 0 ? start : stamps[s - 1], stamps[s]));
    }
  } catch (...) {
    *hook = previous;
    throw;
  }
  *hook = previous;
  user_check(!g_out_of_range) << m.so_path() << " reported a step outside the " << steps
                              << " layers of its model.json: the pair does not match";
  ModelProfile p;
  p.threads = m.num_threads();
  p.runs = runs;
  p.total_ms = median(totals);
  for (auto& v : per_step) p.step_ms.push_back(median(v));
  return p;
}

nlohmann::json read_model_json(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "model.json").string();
  std::ifstream f(path);
  user_check(f.good()) << "cannot read " << path << ": is it a directory written by kiln compile?";
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  user_check(!j.is_discarded() && j.is_object() && j.contains("layers") &&
             j["layers"].is_array())
      << path << " is not a kiln model description (no \"layers\" list)";
  return j;
}

std::string profile_to_json(const ModelProfile& p) {
  nlohmann::json j = {{"threads", p.threads},
                      {"runs", p.runs},
                      {"total_ms", p.total_ms},
                      {"step_ms", p.step_ms}};
  return j.dump(2) + "\n";
}

ModelProfile read_profile(const std::string& path) {
  std::ifstream f(path);
  user_check(f.good()) << "cannot read the profile " << path;
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  user_check(!j.is_discarded() && j.is_object() && j.contains("step_ms") &&
             j["step_ms"].is_array())
      << path << " is not a kiln profile (kiln run --profile writes one)";
  ModelProfile p;
  p.threads = j.value("threads", 1);
  p.runs = j.value("runs", 0);
  p.total_ms = j.value("total_ms", 0.0);
  for (const auto& v : j["step_ms"]) {
    user_check(v.is_number() && v.get<double>() >= 0) << path << ": step_ms holds " << v.dump()
                                                      << ", not a time in ms";
    p.step_ms.push_back(v.get<double>());
  }
  return p;
}

}  // namespace kiln::tools
