#include "tuner/record.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <nlohmann/json.hpp>

#include "compiler/base/error.h"

namespace kiln::tuner {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Thrown inside parse_record only, to stop at the first thing wrong with a line.
struct BadRecord {
  std::string reason;
};

[[noreturn]] void bad(std::string reason) {
  throw BadRecord{std::move(reason)};
}

// The JSON type names a user knows, for "must be a string, got a number".
const char* type_word(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

// Looks up `key` in object `obj` whose dotted path is `path` ("" for the top level), naming
// the full path of whatever is missing or mistyped.
class Fields {
 public:
  Fields(const Json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  const Json* find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  const Json& get(const char* key) const {
    const Json* j = find(key);
    if (!j) bad("missing field '" + name(key) + "'");
    return *j;
  }
  Fields object(const char* key) const {
    const Json& j = get(key);
    if (!j.is_object()) mistyped(key, j, "an object");
    return Fields(j, name(key));
  }
  std::string string(const char* key) const {
    const Json& j = get(key);
    if (!j.is_string()) mistyped(key, j, "a string");
    return j.get<std::string>();
  }
  std::string string_or(const char* key, std::string fallback) const {
    return find(key) ? string(key) : fallback;
  }
  // A finite number that is not negative (times, counts, flops).
  double amount(const char* key) const { return amount_of(get(key), name(key)); }
  double amount_or(const char* key, double fallback) const {
    return find(key) ? amount(key) : fallback;
  }
  int64_t integer(const char* key) const {
    const Json& j = get(key);
    if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX))
      mistyped(key, j, "an integer");
    return j.get<int64_t>();
  }
  const Json& array(const char* key) const {
    const Json& j = get(key);
    if (!j.is_array()) mistyped(key, j, "an array");
    return j;
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    for (const Json& e : array(key)) {
      if (!e.is_string()) bad("field '" + name(key) + "' must hold strings, got " + type_word(e));
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  std::string name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const Json& json() const { return obj_; }

  static double amount_of(const Json& j, const std::string& what) {
    if (!j.is_number()) bad("field '" + what + "' must be a number, got " + type_word(j));
    double v = j.get<double>();
    if (!std::isfinite(v) || v < 0)
      bad("field '" + what + "' must be a finite number >= 0, got " + j.dump());
    return v;
  }

 private:
  [[noreturn]] void mistyped(const char* key, const Json& j, const char* want) const {
    bad("field '" + name(key) + "' must be " + want + ", got " + type_word(j));
  }

  const Json& obj_;
  std::string path_;
};

Target read_target(const Fields& f) {
  Target t;
  t.name = f.string("name");
  t.triple = f.string("triple");
  t.cpu = f.string("cpu");
  t.features = f.strings("features");
  int64_t bits = f.integer("vector_bits");
  if (bits <= 0 || bits > 4096)
    bad("field '" + f.name("vector_bits") + "' must be between 1 and 4096, got " +
        std::to_string(bits));
  t.vector_bits = static_cast<int>(bits);
  return t;
}

// Version 1 wrote real parameters in fixed point, the unit in the name ("lo_milli",
// "alpha_e9", "eps_e12", "value_e3"): the name without the suffix and the value as the f32
// the model stated (every such attribute comes from an f32 ONNX value), so an old record
// keys the same workload a compile makes today. Clip's ±1e12 meant "no bound".
std::pair<std::string, schedules::Param> from_fixed_point(const std::string& key, int64_t value) {
  static const std::pair<const char*, double> kUnits[] = {
      {"_milli", 1e3}, {"_e3", 1e3}, {"_e9", 1e9}, {"_e12", 1e12}};
  for (const auto& [suffix, unit] : kUnits) {
    const std::string s = suffix;
    if (key.size() <= s.size() || key.compare(key.size() - s.size(), s.size(), s) != 0) continue;
    const std::string name = key.substr(0, key.size() - s.size());
    const double v = static_cast<double>(value) / unit;
    if ((name == "lo" || name == "hi") && std::fabs(v) >= 1e12)
      return {name, std::copysign(std::numeric_limits<double>::infinity(), v)};
    return {name, static_cast<double>(static_cast<float>(v))};
  }
  return {key, value};
}

// A parameter's JSON value: an integer, a real, or (reals only) "inf", "-inf".
schedules::Param read_param(const Json& j, const std::string& what) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX)
      bad("field '" + what + "' is out of the int64 range");
    return j.get<int64_t>();
  }
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string() && (j == "inf" || j == "-inf"))
    return j == "inf" ? std::numeric_limits<double>::infinity()
                      : -std::numeric_limits<double>::infinity();
  bad("field '" + what + "' must be a number (or \"inf\", \"-inf\"), got " + type_word(j));
}

Json param_json(const schedules::Param& p) {
  if (p.is_integer()) return p.integer();
  const double v = p.real();
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;  // JSON has no NaN, and no workload holds one (the mappers refuse it)
}

schedules::Workload read_workload(const Fields& f, int version) {
  schedules::Workload w;
  w.op = f.string("op");
  Fields params = f.object("params");
  for (auto it = params.json().begin(); it != params.json().end(); ++it) {
    if (version == 1) {
      w.params.insert(from_fixed_point(it.key(), params.integer(it.key().c_str())));
    } else {
      w.params[it.key()] = read_param(it.value(), params.name(it.key().c_str()));
    }
  }
  std::string dtype = f.string("dtype");
  try {
    w.dtype = ir::parse_data_type(dtype);
  } catch (const UserError& e) {
    bad("field '" + f.name("dtype") + "': " + e.what());
  }
  w.epilogue = f.strings("epilogue");
  if (f.find("run_time")) w.run_time = f.strings("run_time");
  if (f.find("run_time_max"))
    for (const auto& [name, value] : f.object("run_time_max").json().items()) {
      if (!value.is_number_integer()) bad("field 'run_time_max." + name + "' must be an integer");
      w.run_time_max[name] = value.get<int64_t>();
    }
  return w;
}

MeasuredOn read_machine(const Fields& f) {
  MeasuredOn m;
  m.vendor = f.string("vendor");
  m.model = f.string("model");
  if (m.model.empty()) bad("field '" + f.name("model") + "' is empty");
  m.features = f.strings("features");
  m.cores = static_cast<uint32_t>(std::min(f.amount("cores"), 1e6));
  m.threads = static_cast<uint32_t>(std::min(f.amount("threads"), 1e6));
  m.kiln = f.string_or("kiln", "");
  m.emulator = f.string_or("emulator", "");
  return m;
}

MeasureResult read_result(const Fields& f) {
  MeasureResult r;
  for (const Json& c : f.array("costs")) r.costs.push_back(Fields::amount_of(c, f.name("costs")));
  std::string error = f.string("error");
  std::optional<MeasureErrorKind> kind = measure_error_from_name(error);
  if (!kind) {
    std::string valid;
    for (MeasureErrorKind k : all_measure_error_kinds())
      valid += (valid.empty() ? "" : ", ") + std::string(measure_error_name(k));
    bad("field '" + f.name("error") + "' = '" + error + "' is not an error kind (valid: " + valid +
        ")");
  }
  r.error = *kind;
  if (r.error == MeasureErrorKind::Ok && r.costs.empty())
    bad("field '" + f.name("error") + "' is ok but '" + f.name("costs") + "' is empty");
  // A time of 0 would win every comparison and show infinite GFLOPS: no kernel runs in no
  // time, so such a record is a damaged one.
  if (r.error == MeasureErrorKind::Ok)
    for (double c : r.costs)
      if (!(c > 0)) bad("field '" + f.name("costs") + "' holds a time of 0; a measured time is positive");
  r.message = f.string_or("message", "");
  r.all_cost = f.amount_or("all_cost", 0);
  r.timestamp = f.amount_or("timestamp", 0);
  r.device_key = f.string_or("device", "");
  if (f.find("machine")) r.measured_on = read_machine(f.object("machine"));
  return r;
}

TuningRecord read_record(const Json& j) {
  if (!j.is_object()) bad(std::string("not a JSON object but ") + type_word(j));
  Fields top(j, "");
  const Json& v = top.get("v");
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kRecordFormatVersion)
    bad("unknown format version " + v.dump() + " (this kiln reads versions 1 to " +
        std::to_string(kRecordFormatVersion) + ")");
  const int version = static_cast<int>(v.get<int64_t>());
  TuningRecord r;
  r.target = read_target(top.object("target"));
  Fields task = top.object("task");
  r.template_name = task.string("template");
  r.workload = read_workload(task.object("workload"), version);
  const Json& config = top.get("config");
  if (!config.is_object())
    bad(std::string("field 'config' must be an object, got ") + type_word(config));
  try {
    r.config = schedules::Config::from_json(config.dump());
  } catch (const UserError& e) {
    bad(std::string("field 'config': ") + e.what());
  }
  r.result = read_result(top.object("result"));
  r.flops = top.amount("flops");
  return r;
}

// nlohmann's messages start with "[json.exception.parse_error.101] ": keep what follows.
std::string without_exception_id(const std::string& what) {
  size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

}  // namespace

double TuningRecord::gflops() const {
  return result.ok() ? flops / result.cost() / 1e9 : 0;
}

std::string record_to_json(const TuningRecord& r) {
  OrderedJson target = {{"name", r.target.name},
                        {"triple", r.target.triple},
                        {"cpu", r.target.cpu},
                        {"features", r.target.features},
                        {"vector_bits", r.target.vector_bits}};
  Json params = Json::object();
  for (const auto& [name, value] : r.workload.params) params[name] = param_json(value);
  OrderedJson workload = {{"op", r.workload.op},
                          {"params", std::move(params)},
                          {"dtype", r.workload.dtype.str()},
                          {"epilogue", r.workload.epilogue}};
  if (!r.workload.run_time.empty()) workload["run_time"] = r.workload.run_time;
  if (!r.workload.run_time_max.empty()) workload["run_time_max"] = r.workload.run_time_max;
  OrderedJson result = {
      {"costs", r.result.costs},         {"error", measure_error_name(r.result.error)},
      {"message", r.result.message},     {"all_cost", r.result.all_cost},
      {"timestamp", r.result.timestamp}, {"device", r.result.device_key}};
  if (const MeasuredOn& m = r.result.measured_on; m.known()) {
    OrderedJson machine = {{"vendor", m.vendor}, {"model", m.model},     {"features", m.features},
                           {"cores", m.cores},   {"threads", m.threads}, {"kiln", m.kiln}};
    if (!m.emulator.empty()) machine["emulator"] = m.emulator;
    result["machine"] = std::move(machine);
  }
  OrderedJson j = {{"v", kRecordFormatVersion},
                   {"target", std::move(target)},
                   {"task", {{"template", r.template_name}, {"workload", std::move(workload)}}},
                   {"config", r.config.values()},
                   {"result", std::move(result)},
                   {"flops", r.flops}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ParsedRecord parse_record(std::string_view line) {
  ParsedRecord out;
  try {
    out.record = read_record(Json::parse(line));
  } catch (const BadRecord& e) {
    out.error = e.reason;
  } catch (const Json::parse_error& e) {
    out.error = "malformed JSON: " + without_exception_id(e.what());
  } catch (const Json::exception& e) {
    // A case the checks above missed; still a bad line, never a crash of the reader.
    out.error = "unexpected JSON content: " + without_exception_id(e.what());
  }
  return out;
}

std::string target_key(const Target& t) {
  std::vector<std::string> features = t.features;
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  std::string key =
      t.name + " " + t.triple + " cpu=" + t.cpu + " bits=" + std::to_string(t.vector_bits) + " ";
  for (size_t i = 0; i < features.size(); ++i) key += (i ? "," : "") + features[i];
  return key;
}

}  // namespace kiln::tuner
