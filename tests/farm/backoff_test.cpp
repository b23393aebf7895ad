// The farm's retry pacing (rpc/farm/backoff.h): jittered waits inside [cap/2, cap], the cap
// doubling up to its limit and starting over after reset().
#include <gtest/gtest.h>

#include <set>

#include "rpc/farm/backoff.h"

namespace kiln::farm {
namespace {

TEST(Backoff, WaitsDoubleUpToTheCapWithJitterInside) {
  Backoff backoff(100, 3000);
  int cap = 100;
  for (int attempt = 0; attempt < 12; ++attempt) {
    const int wait = backoff.next_ms();
    EXPECT_GE(wait, cap / 2) << "attempt " << attempt;
    EXPECT_LE(wait, cap) << "attempt " << attempt;
    cap = std::min(cap * 2, 3000);
  }
  EXPECT_EQ(backoff.cap_ms(), 3000);
}

TEST(Backoff, ResetStartsOverFromTheFirstWait) {
  Backoff backoff(50, 800);
  for (int i = 0; i < 6; ++i) backoff.next_ms();
  backoff.reset();
  EXPECT_LE(backoff.next_ms(), 50);
}

TEST(Backoff, WaitsAreJitteredNotInLockStep) {
  // Two hundred waits at the cap take many values: a fleet of workers spreads out.
  Backoff backoff(1000, 1000);
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) seen.insert(backoff.next_ms());
  EXPECT_GT(seen.size(), 50u);
}

}  // namespace
}  // namespace kiln::farm
