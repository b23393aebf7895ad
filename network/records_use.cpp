#include "network/records_use.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace kiln::network {

std::string describe_records_use(const tuner::LoadedRecords& loaded, const Target& target,
                                 const NetworkProgram& program) {
  std::set<std::string> model_workloads;
  for (const Task& t : program.tasks) model_workloads.insert(t.workload.str());
  const std::string wanted = tuner::target_key(target);
  size_t this_target = 0, this_model = 0;
  std::map<std::string, size_t> other_targets;  // target name -> records
  for (const tuner::TuningRecord& r : loaded.records) {
    if (tuner::target_key(r.target) != wanted) {
      ++other_targets[r.target.name];
      continue;
    }
    ++this_target;
    this_model += model_workloads.count(r.workload.str());
  }
  const size_t tuned =
      program.tasks.size() - std::count_if(program.tasks.begin(), program.tasks.end(),
                                           [](const Task& t) { return t.untuned; });
  const size_t read = loaded.records.size() + loaded.problems.size();

  std::ostringstream s;
  s << "records: " << read << " lines read, " << loaded.records.size() << " valid, " << this_target
    << " for target " << target.name << ", " << this_model << " for this model's kernels (" << tuned
    << " of " << program.tasks.size() << " kernels tuned from them)\n";
  if (!loaded.problems.empty())
    s << "  " << loaded.problems.size()
      << " lines skipped as invalid (first: " << loaded.problems.front().str() << ")\n";
  for (const auto& [name, n] : other_targets)
    s << "  " << n << " records for another target, " << name
      << " (its features or CPU differ from " << target.name << "'s)\n";
  if (this_target > this_model)
    s << "  " << this_target - this_model
      << " records for workloads (or channel blocks) this compile does not use\n";
  if (tuned == 0)
    s << "warning: no record of the given logs applies to this model on " << target.name
      << ": every kernel is untuned\n";
  return s.str();
}

}  // namespace kiln::network
