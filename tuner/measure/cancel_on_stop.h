// Turning the tuner's stop flag into a cancel of farm batches: what FarmRunner and FarmBuilders
// both need while they read a batch's results (a cancelled batch's results still stream back,
// as CANCELLED).
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "rpc/farm/client.h"

namespace kiln::tuner {

// While it lives, a watcher cancels every batch once `stop` is set.
class CancelOnStop {
 public:
  CancelOnStop(std::vector<farm::Batch*> batches, const std::atomic<bool>& stop)
      : watcher_([this, batches = std::move(batches), &stop] {
          while (!finished_ && !stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          if (!finished_)
            for (farm::Batch* b : batches) b->cancel();
        }) {}
  ~CancelOnStop() {
    finished_ = true;
    watcher_.join();
  }
  CancelOnStop(const CancelOnStop&) = delete;
  CancelOnStop& operator=(const CancelOnStop&) = delete;

 private:
  std::atomic<bool> finished_ = false;
  std::thread watcher_;
};

}  // namespace kiln::tuner
