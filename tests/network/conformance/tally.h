// The bookkeeping of a conformance run: each claimed case's outcome (passed, refused by the
// compiler with a UserError, or failed: wrong numbers, a crash, a runtime error) checked
// against the list of cases expected to be refused and why (expected_skips.cpp). A case
// refused for the listed reason is a skip; anything else that does not pass fails the test,
// and so does a listed case that passes or is refused for another reason, so a new failure
// cannot hide as a skip and the list stays true.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kiln::network::conformance {

struct Outcome {
  enum class Kind { Passed, Refused, Failed };
  Kind kind = Kind::Passed;
  std::string message;  // the compiler's refusal or what went wrong
  static Outcome passed() { return {}; }
  static Outcome refused(std::string why) { return {Kind::Refused, std::move(why)}; }
  static Outcome failed(std::string why) { return {Kind::Failed, std::move(why)}; }
};

// Claimed cases the compiler refuses: case name -> the reason, a text the refusal must contain.
const std::map<std::string, std::string>& expected_skips();

class Tally {
 public:
  explicit Tally(std::string title) : title_(std::move(title)) {}
  void record(const std::string& case_name, const Outcome& outcome, int frozen_inputs);
  // Prints the summary and the skipped cases with the compiler's refusal; returns the failures.
  std::vector<std::string> finish(int total_cases, int claimed_cases) const;

 private:
  std::string title_;
  int run_ = 0, passed_ = 0, with_frozen_ = 0;
  std::map<std::string, std::string> skipped_;  // name -> the compiler's refusal
  std::vector<std::string> failures_;
  std::vector<std::string> seen_;
};

}  // namespace kiln::network::conformance
