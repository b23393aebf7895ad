#include "tuner/measure/runner.h"

#include <thread>

namespace kiln::tuner {

FarmRunner::FarmRunner(std::string address, std::string token, std::string key, std::string tls_ca)
    : client_(std::move(address), std::move(token), std::move(tls_ca)), key_(std::move(key)) {}

std::vector<farm::pb::Result> FarmRunner::run(std::vector<farm::pb::Job> jobs,
                                              const ResultFn& on_result,
                                              const std::atomic<bool>& stop) {
  const size_t n = jobs.size();
  std::vector<farm::pb::Result> results(n);
  if (n == 0) return results;
  std::unique_ptr<farm::Batch> batch = client_.submit(key_, std::move(jobs));
  // A watcher turns `stop` into a cancel of the batch; its results still stream back.
  std::atomic<bool> finished = false;
  std::thread watcher([&] {
    while (!finished && !stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!finished) batch->cancel();
  });
  try {
    farm::pb::Result r;
    while (batch->next(&r)) {
      if (r.index() < n) {
        results[r.index()] = r;
        if (on_result) on_result(r.index(), r);
      }
    }
  } catch (...) {
    finished = true;
    watcher.join();
    throw;
  }
  finished = true;
  watcher.join();
  return results;
}

std::vector<farm::pb::Result> LocalRunner::run(std::vector<farm::pb::Job> jobs,
                                               const ResultFn& on_result,
                                               const std::atomic<bool>& stop) {
  std::vector<farm::pb::Result> results(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].set_index(static_cast<uint32_t>(i));
    if (stop) {
      results[i].set_index(static_cast<uint32_t>(i));
      results[i].set_error(farm::pb::CANCELLED);
      results[i].set_message("stopped before it ran");
    } else {
      results[i] = farm::run_in_sandbox(jobs[i], sandbox_, stop);
    }
    if (on_result) on_result(i, results[i]);
  }
  return results;
}

}  // namespace kiln::tuner
