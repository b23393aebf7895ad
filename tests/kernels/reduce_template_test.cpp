// reduce.rows.{reduce_sum, reduce_mean, reduce_max}: rows (inner 1, with interleaved
// partials), middle axes (inner > 1, vectorised over inner), awkward sizes, on every target
// preset (ARM under qemu) and in half precision; plus bad workloads.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/reduce.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload reduce(const std::string& op, int64_t outer, int64_t reduced, int64_t inner,
                DataType t = DataType::f32()) {
  return Workload{op, {{"outer", outer}, {"reduced", reduced}, {"inner", inner}}, t, {}};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  std::vector<Workload> shapes;
  for (const std::string& op : schedules::reduce_ops()) {
    shapes.push_back(reduce(op, 7, 37, 1));  // the last axis, a ragged tail of partials
    shapes.push_back(reduce(op, 3, 5, 19));  // a middle axis
    shapes.push_back(reduce(op, 1, 64, 1));  // everything
    shapes.push_back(reduce(op, 2, 1, 33));  // nothing to reduce
  }
  add_small_shape_cases(out, shapes);
  for (const auto& [t, d] : half_targets())
    out.push_back({reduce("reduce_mean", 4, 40, 1, d), t, -1});
  // Network shapes: a transformer's mean over hidden 768, a squeeze-excite mean over H, W.
  add_native_cases(out, {reduce("reduce_mean", 128, 768, 1), reduce("reduce_max", 1, 49, 512),
                         reduce("reduce_sum", 64, 3136, 1)});
  return out;
}

class ReduceTemplateTest : public TemplateTest {};

TEST_P(ReduceTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(ReduceTemplateErrors, BadWorkloads) {
  Target x86 = target_from_name("x86-avx512");
  const schedules::OpTemplate& t = schedules::reduce_template("reduce_sum");
  EXPECT_THROW(t.inputs(reduce("reduce_sum", 0, 4, 1)), UserError);
  EXPECT_THROW(schedules::reduce_template("reduce_prod"), UserError);
  Workload w = reduce("reduce_sum", 2, 8, 3);
  EXPECT_THROW(t.instantiate(w, x86, schedules::Config({{"partials", 8}, {"parallel", 0}})),
               UserError);  // partials only for rows (inner 1)
}

}  // namespace
}  // namespace kiln::testing
