// Retry pacing for every retry loop of the farm (workers, clients, the local farm's waits):
// exponential backoff with jitter (each wait is uniform in [cap/2, cap]), the cap doubling
// from `first_ms` to `max_ms`, so a fleet of workers whose tracker restarts does not hammer
// it in lock step, nor wait long once it is back. reset() after a success.
#ifndef KILN_RPC_FARM_BACKOFF_H
#define KILN_RPC_FARM_BACKOFF_H

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace kiln::farm {

class Backoff {
 public:
  explicit Backoff(int first_ms = 100, int max_ms = 3000)
      : first_ms_(first_ms), max_ms_(max_ms), cap_ms_(first_ms), rng_(std::random_device{}()) {}
  // The next wait, in milliseconds; doubles the cap for the one after.
  int next_ms() {
    const int wait = std::uniform_int_distribution<int>(cap_ms_ / 2, cap_ms_)(rng_);
    cap_ms_ = std::min(cap_ms_ * 2, max_ms_);
    return wait;
  }
  void wait() { std::this_thread::sleep_for(std::chrono::milliseconds(next_ms())); }
  void reset() { cap_ms_ = first_ms_; }
  int cap_ms() const { return cap_ms_; }

 private:
  int first_ms_, max_ms_, cap_ms_;
  std::mt19937 rng_;
};

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_BACKOFF_H
