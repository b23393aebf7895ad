#include "schedules/config.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "compiler/base/error.h"

namespace kiln::schedules {

int64_t Config::operator[](const std::string& knob) const {
  auto it = values_.find(knob);
  user_check(it != values_.end()) << "config " << to_json() << " has no value for knob '" << knob
                                  << "'";
  return it->second;
}

std::string Config::to_json() const { return nlohmann::json(values_).dump(); }

Config Config::from_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  user_check(!j.is_discarded() && j.is_object())
      << "config '" << text << "' is not a JSON object such as {\"mr\": 8}";
  std::map<std::string, int64_t> values;
  for (auto it = j.begin(); it != j.end(); ++it) {
    // An unsigned value past INT64_MAX would otherwise wrap to a negative one silently.
    bool fits = it.value().is_number_integer() &&
                !(it.value().is_number_unsigned() && it.value().get<uint64_t>() > INT64_MAX);
    user_check(fits) << "config knob '" << it.key() << "' must be a 64-bit integer, got "
                     << it.value().dump();
    values[it.key()] = it.value().get<int64_t>();
  }
  return Config(std::move(values));
}

void ConfigSpace::define_knob(const std::string& name, std::vector<int64_t> choices,
                              std::optional<int64_t> legacy_default) {
  internal_check(!choices.empty()) << "knob " << name << " has no choices";
  for (const Knob& k : knobs_) internal_check(k.name != name) << "knob " << name << " defined twice";
  internal_check(!legacy_default ||
                 std::find(choices.begin(), choices.end(), *legacy_default) != choices.end())
      << "knob " << name << "'s legacy default " << *legacy_default << " is not one of its choices";
  knobs_.push_back({name, std::move(choices), legacy_default});
}

Config ConfigSpace::legacy_defaults() const {
  return with_defaults(Config());
}

Config ConfigSpace::with_defaults(const Config& c) const {
  Config out = c;
  for (const Knob& k : knobs_)
    if (k.legacy_default && !c.has(k.name)) out.set(k.name, *k.legacy_default);
  return out;
}

ConfigSpace ConfigSpace::pinned(const Config& fixed) const {
  ConfigSpace out = *this;
  for (Knob& k : out.knobs_) {
    if (!fixed.has(k.name)) continue;
    const int64_t v = fixed[k.name];
    if (std::find(k.choices.begin(), k.choices.end(), v) != k.choices.end()) k.choices = {v};
  }
  return out;
}

void ConfigSpace::define_split(const std::string& name, int64_t extent, int64_t max_factor) {
  std::vector<int64_t> f;
  for (int64_t d = 1; d <= std::min(extent, max_factor); ++d)
    if (extent % d == 0 || (d & (d - 1)) == 0) f.push_back(d);
  define_knob(name, f);
}

uint64_t ConfigSpace::size() const {
  uint64_t n = 1;
  for (const Knob& k : knobs_) n *= k.choices.size();
  return n;
}

Config ConfigSpace::at(uint64_t index) const {
  std::map<std::string, int64_t> v;
  for (const Knob& k : knobs_) {
    v[k.name] = k.choices[index % k.choices.size()];
    index /= k.choices.size();
  }
  return Config(std::move(v));
}

Config ConfigSpace::random(std::mt19937_64& rng) const {
  std::map<std::string, int64_t> v;
  for (const Knob& k : knobs_) v[k.name] = k.choices[rng() % k.choices.size()];
  return Config(std::move(v));
}

void ConfigSpace::validate(const Config& c) const {
  std::string names;
  for (const Knob& k : knobs_) names += (names.empty() ? "" : ", ") + k.name;
  for (const auto& [name, value] : c.values()) {
    bool known = std::any_of(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
    user_check(known) << "unknown knob '" << name << "' (this space's knobs: " << names << ")";
  }
  for (const Knob& k : knobs_) {
    user_check(c.has(k.name)) << "config " << c.to_json() << " has no value for knob '" << k.name
                              << "' (this space's knobs: " << names << ")";
    int64_t v = c[k.name];
    bool ok = std::find(k.choices.begin(), k.choices.end(), v) != k.choices.end();
    std::string valid;
    for (int64_t x : k.choices) valid += (valid.empty() ? "" : ", ") + std::to_string(x);
    user_check(ok) << "knob '" << k.name << "' = " << v << " is not one of its choices (" << valid
                   << ")";
  }
}

bool ConfigSpace::contains(const Config& c) const {
  if (c.values().size() != knobs_.size()) return false;
  for (const Knob& k : knobs_) {
    if (!c.has(k.name)) return false;
    if (std::find(k.choices.begin(), k.choices.end(), c[k.name]) == k.choices.end()) return false;
  }
  return true;
}

uint64_t ConfigSpace::index_of(const Config& c) const {
  internal_check(contains(c)) << "config " << c.to_json() << " is not a point of this space";
  uint64_t index = 0;
  for (size_t i = knobs_.size(); i-- > 0;) {
    const Knob& k = knobs_[i];
    const auto pos = std::find(k.choices.begin(), k.choices.end(), c[k.name]) - k.choices.begin();
    index = index * k.choices.size() + static_cast<uint64_t>(pos);
  }
  return index;
}

}  // namespace kiln::schedules
