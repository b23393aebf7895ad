// One candidate as a measurement input, and its result judged: the bridge between a template's
// kernel (logical tensors, packing, a reference) and what a runner moves (raw argument bytes,
// costs, outputs: tuner/measure/measure_input.h).
//
// Every candidate of a task runs on the same logical inputs (random, seeded), packed into its
// own layout; its output comes back, is unpacked, and is compared with the reference by the
// one rule (kiln/compare.h). A wrong result is an error kind like a crash: never a best.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "schedules/op_template.h"
#include "tuner/builder.h"
#include "tuner/host_values.h"
#include "tuner/measure/measure_input.h"

namespace kiln::tuner {

// The logical inputs and reference output of one task (template + workload), computed once
// and shared by its candidates; keyed by the input dtypes a kernel asks for.
class TaskData {
 public:
  TaskData(const schedules::OpTemplate& tpl, schedules::Workload w, uint32_t seed = 11)
      : tpl_(&tpl), w_(std::move(w)), seed_(seed) {}
  // Inputs rounded to each argument's dtype (in call order), and the reference.
  struct Set {
    std::vector<Values> inputs;
    Values reference;
  };
  const Set& for_kernel(const BuiltKernel& k);
  const schedules::Workload& workload() const { return w_; }

 private:
  const schedules::OpTemplate* tpl_;
  schedules::Workload w_;
  uint32_t seed_;
  std::map<std::vector<std::string>, Set> sets_;
};

// The kernel's arguments on the task's inputs, in call order: each input packed into the
// kernel's layout and encoded in its buffer's element type; the output zeroed.
std::vector<Bytes> kernel_arguments(const BuiltKernel& k, TaskData& data);
// The kernel's raw output judged against the task's reference: read in the output buffer's
// element type, unpacked to the logical layout, compared by the one rule (kiln/compare.h).
Comparison compare_output(const BuiltKernel& k, TaskData& data, const Bytes& raw, double rtol);

// The input that runs `k` (compiled into `so`) on the task's inputs and returns its output,
// for judge() to compare with the reference.
MeasureInput make_input(const BuiltKernel& k, const std::vector<uint8_t>& so, TaskData& data,
                        const MeasureOptions& options);

// A run's result judged: when it ran, its output unpacked and compared with the reference
// within `rtol`. `correct` is false for every error kind and for a wrong result.
struct Judgement {
  bool correct = false;
  MeasureErrorKind error = MeasureErrorKind::Ok;  // WrongResult when the output differs
  std::string message;
  std::vector<double> costs;  // seconds per call
};
Judgement judge(const RunResult& result, const BuiltKernel& k, TaskData& data, double rtol);

}  // namespace kiln::tuner
