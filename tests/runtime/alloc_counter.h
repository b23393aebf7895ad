// Counts the process's operator new calls between start() and stop(): linking alloc_counter.cpp
// into a test binary replaces the global operator new/delete with counting ones.
#pragma once

namespace kiln::testing {

void start_counting_allocations();
// The number of operator new calls (any thread) since start_counting_allocations().
int stop_counting_allocations();

}  // namespace kiln::testing
