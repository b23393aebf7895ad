// target_record.h: "k=v;k=v" fields, and the features checked against the CPU probe.
#include "target_record.h"

#include "kiln/cpu_features.h"

namespace kiln {
namespace {

// The value of `key` in a "k=v;k=v" record ("" when absent).
std::string record_field(std::string_view record, std::string_view key) {
  std::size_t at = 0;
  while (at < record.size()) {
    std::size_t end = record.find(';', at);
    if (end == std::string_view::npos) end = record.size();
    const std::string_view item = record.substr(at, end - at);
    if (item.size() > key.size() && item.substr(0, key.size()) == key && item[key.size()] == '=')
      return std::string(item.substr(key.size() + 1));
    at = end + 1;
  }
  return "";
}

}  // namespace

TargetRecord parse_target_record(std::string_view record) {
  return {record_field(record, "target"), record_field(record, "arch"),
          record_field(record, "features")};
}

std::string missing_cpu_features(const TargetRecord& record, std::size_t* count) {
  std::string missing;
  *count = 0;
  const std::string& features = record.features;
  std::size_t at = 0;
  while (at < features.size()) {
    std::size_t end = features.find(',', at);
    if (end == std::string::npos) end = features.size();
    const std::string f = features.substr(at, end - at);
    if (!f.empty() && !cpu_has(f)) {
      missing += (missing.empty() ? "" : ", ") + f;
      ++*count;
    }
    at = end + 1;
  }
  return missing;
}

}  // namespace kiln
