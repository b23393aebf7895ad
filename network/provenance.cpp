#include "network/provenance.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kiln/params.h"

namespace kiln::network {

namespace {

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

std::string checksum_of(const std::string& bytes) {
  return hex(params_checksum(bytes.data(), bytes.size()));
}

}  // namespace

RecordsProvenance records_provenance(const std::vector<std::string>& paths,
                                     const std::vector<tuner::TuningRecord>& records,
                                     const Target& target, const NetworkProgram& program) {
  RecordsProvenance out;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    out.logs.push_back({std::filesystem::path(path).filename().string(), checksum_of(bytes)});
  }
  const std::string key = tuner::target_key(target);
  for (const Task& t : program.tasks) {
    if (t.untuned) continue;
    const tuner::TuningRecord* best = nullptr;
    for (const tuner::TuningRecord& r : records)
      if (r.result.ok() && r.template_name == t.tpl->name() && r.config == t.config &&
          r.workload.str() == t.workload.str() && tuner::target_key(r.target) == key &&
          (!best || r.result.cost() < best->result.cost()))
        best = &r;
    if (best) out.kernels.push_back({t.kernel, checksum_of(tuner::record_to_json(*best))});
  }
  return out;
}

}  // namespace kiln::network
