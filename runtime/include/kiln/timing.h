// Timing a call: the one loop that kiln times anything with, so a kernel runner's cost, a
// `kiln run` latency, an example's median and a bench's peer ratio all mean the same thing.
//
// AutoTVM's rule: a repeat is `number` back-to-back calls and its time is their mean (a call
// shorter than the clock's resolution is still timed); `min_repeat_ms` raises `number` until
// one repeat lasts that long. Header-only, so the runtime library a board links stays as small
// as it was and only programs that time something carry this code.
#ifndef KILN_TIMING_H
#define KILN_TIMING_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace kiln {

struct TimingOptions {
  int warmup = 0;            // untimed calls before the first repeat
  int number = 1;            // calls per repeat (raised to reach min_repeat_ms)
  int repeat = 1;            // timed repeats: one time each
  double min_repeat_ms = 0;  // a repeat lasts at least this long (0: `number` calls)
  double cooldown_ms = 0;    // a pause between repeats (a board's clock settles)
  bool flush_cache = false;  // sweep 64 MiB before each repeat: every repeat starts cold
};

struct Timing {
  std::vector<double> seconds;  // seconds per call, one per repeat, in the order they ran
  int number = 1;               // calls per repeat actually used

  // The fastest repeat: whatever else runs on the machine only ever slows a call down, so the
  // least disturbed repeat is the one closest to what the code costs.
  double best() const {
    return seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
  }
  double median() const {
    if (seconds.empty()) return 0;
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
  double best_ms() const { return best() * 1e3; }
  double median_ms() const { return median() * 1e3; }
};

// Calls `call` warmup + (one probe when min_repeat_ms is set) + repeat * number times.
template <typename Call>
Timing time_calls(Call&& call, const TimingOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (int i = 0; i < o.warmup; ++i) call();
  Timing t;
  t.number = std::max(1, o.number);
  if (o.min_repeat_ms > 0) {
    const auto t0 = Clock::now();
    call();
    const double once_ms = std::max(seconds_since(t0) * 1e3, 1e-6);
    t.number = static_cast<int>(
        std::clamp<double>(std::ceil(o.min_repeat_ms / once_ms), t.number, 1000000));
  }
  std::vector<uint8_t> flush(o.flush_cache ? (64u << 20) : 0);
  const int repeat = std::max(1, o.repeat);
  t.seconds.reserve(repeat);
  for (int r = 0; r < repeat; ++r) {
    if (o.cooldown_ms > 0 && r > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.cooldown_ms));
    for (std::size_t i = 0; i < flush.size(); i += 64) flush[i] += 1;  // evicts the caches
    const auto t0 = Clock::now();
    for (int n = 0; n < t.number; ++n) call();
    t.seconds.push_back(seconds_since(t0) / t.number);
  }
  return t;
}

}  // namespace kiln

#endif  // KILN_TIMING_H
