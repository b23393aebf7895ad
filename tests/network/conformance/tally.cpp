#include "tests/network/conformance/tally.h"

#include <algorithm>
#include <iostream>

namespace kiln::network::conformance {

void Tally::record(const std::string& name, const Outcome& o, int frozen_inputs) {
  seen_.push_back(name);
  auto listed = expected_skips().find(name);
  if (o.kind == Outcome::Kind::Refused && listed != expected_skips().end() &&
      o.message.find(listed->second) != std::string::npos) {
    skipped_[name] = o.message;
    return;
  }
  if (listed != expected_skips().end()) {
    failures_.push_back(name + " is listed as refused (" + listed->second + ") but " +
                        (o.kind == Outcome::Kind::Passed ? "passes" : "got: " + o.message));
    return;
  }
  ++run_;
  with_frozen_ += frozen_inputs > 0;
  if (o.kind == Outcome::Kind::Passed)
    ++passed_;
  else
    failures_.push_back(name + (o.kind == Outcome::Kind::Refused ? ": refused: " : ": failed: ") +
                        o.message);
}

std::vector<std::string> Tally::finish(int total_cases, int claimed_cases) const {
  std::vector<std::string> failures = failures_;
  for (const auto& [name, reason] : expected_skips())
    if (std::find(seen_.begin(), seen_.end(), name) == seen_.end())
      failures.push_back(name + " is in the skip list but is not a claimed case here");
  std::cout << "[" << title_ << "] " << total_cases << " node tests, " << claimed_cases
            << " use only claimed operators: " << run_ << " ran, " << passed_ << " passed ("
            << with_frozen_ << " with weights or shape arguments frozen into initializers), "
            << skipped_.size() << " skipped\n";
  for (const auto& [name, reason] : skipped_) std::cout << "  skipped " << name << ": " << reason << "\n";
  return failures;
}

}  // namespace kiln::network::conformance
