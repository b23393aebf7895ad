// Config spaces and configs: the tunable choices of a schedule template, as plain data.
//
// A template declares knobs, each a named list of integer choices (a split factor, an
// unroll depth, on/off), the way AutoTVM's define_knob/define_split do. A Config picks one
// value per knob; it prints as one JSON object (the tuner's records store it) and applying
// it to a template is a pure function of (workload, target, config).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln::schedules {

struct Knob {
  std::string name;
  std::vector<int64_t> choices;
  // For a knob added to a template after logs were written: the value that reproduces the
  // schedule the template built before the knob existed. A config from such a log, which
  // lacks the knob, takes this value (ConfigSpace::with_defaults). Empty for original knobs.
  std::optional<int64_t> legacy_default;
};

class Config {
 public:
  Config() = default;
  explicit Config(std::map<std::string, int64_t> values) : values_(std::move(values)) {}
  // The value of a knob; UserError naming the knob when the config lacks it.
  int64_t operator[](const std::string& knob) const;
  bool has(const std::string& knob) const { return values_.count(knob) > 0; }
  void set(const std::string& knob, int64_t v) { values_[knob] = v; }
  const std::map<std::string, int64_t>& values() const { return values_; }
  std::string to_json() const;  // {"mr":8,"nr":32}
  static Config from_json(const std::string& text);  // UserError on malformed text
  bool operator==(const Config&) const = default;

 private:
  std::map<std::string, int64_t> values_;
};

class ConfigSpace {
 public:
  // `legacy_default`: see Knob (one of `choices`).
  void define_knob(const std::string& name, std::vector<int64_t> choices,
                   std::optional<int64_t> legacy_default = std::nullopt);
  // Split factors for an axis of `extent`: its divisors and powers of two up to `max_factor`.
  void define_split(const std::string& name, int64_t extent, int64_t max_factor);

  const std::vector<Knob>& knobs() const { return knobs_; }
  uint64_t size() const;                         // number of distinct configs
  Config at(uint64_t index) const;               // mixed-radix enumeration
  Config random(std::mt19937_64& rng) const;
  // Checks that every knob of the space has a valid value in `c` and that `c` names no knob
  // the space lacks (UserError naming the knob and what would be valid).
  void validate(const Config& c) const;
  // `c` with each knob it lacks that has a legacy default set to that default: an old log's
  // config mapped into today's space (apply-history-best, resume and transfer all read logs
  // through this). Knobs `c` has are kept as they are, unknown or out of range ones included,
  // so validate() still reports them.
  Config with_defaults(const Config& c) const;
  // The knobs that have a legacy default, each at it: pinned (see pinned()), the space a
  // template offered before those knobs were added.
  Config legacy_defaults() const;
  // Whether `c` is a point of the space (what validate checks, without throwing).
  bool contains(const Config& c) const;
  // The index of a point of the space (at(index_of(c)) == c); InternalError when it is not one.
  uint64_t index_of(const Config& c) const;
  // The subspace where each knob `fixed` names, and this space offers that value of, has only
  // that value (other knobs of `fixed` are ignored): a search that must keep some choices,
  // such as a network's channel blocks, walks the rest.
  ConfigSpace pinned(const Config& fixed) const;

 private:
  std::vector<Knob> knobs_;
};

}  // namespace kiln::schedules
