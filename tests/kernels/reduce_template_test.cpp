// reduce.rows.{reduce_sum, reduce_mean, reduce_max, reduce_min}: rows (inner 1, with
// interleaved partials), middle axes (inner > 1, vectorised over inner), awkward sizes, on
// every target preset (ARM under qemu) and in half precision; arg.rows.{arg_max, arg_min}
// (ties: first and last index) and cumsum.rows (forward, reverse, exclusive) the same way;
// plus bad workloads.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/base/error.h"
#include "schedules/reduce/arg_reduce.h"
#include "schedules/reduce/cumsum.h"
#include "schedules/reduce/reduce.h"
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
  // ArgMax / ArgMin along the last axis, a middle one and everything; CumSum likewise, with
  // each of exclusive and reverse.
  std::vector<Workload> along;
  for (const std::string& op : schedules::arg_reduce_ops())
    for (int64_t last = 0; last < 2; ++last)
      for (Workload w : {reduce(op, 7, 37, 1), reduce(op, 3, 5, 19), reduce(op, 1, 64, 1)}) {
        w.params["select_last"] = last;
        along.push_back(w);
      }
  for (int64_t exclusive = 0; exclusive < 2; ++exclusive)
    for (int64_t reverse = 0; reverse < 2; ++reverse)
      for (Workload w : {reduce("cumsum", 2, 16, 1), reduce("cumsum", 3, 7, 9)}) {
        w.params["exclusive"] = exclusive, w.params["reverse"] = reverse;
        along.push_back(w);
      }
  add_small_shape_cases(out, along);
  return out;
}

class ReduceTemplateTest : public TemplateTest {};

TEST_P(ReduceTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

// Ties, which random inputs never have: values rounded to {-2, ..., 2}, so every row holds
// its extreme several times and the first and the last index differ.
TEST(ArgReduceTemplate, TiesPickTheFirstOrTheLastIndex) {
  for (const std::string& op : schedules::arg_reduce_ops())
    for (int64_t last = 0; last < 2; ++last)
      for (const std::string target : {"x86-avx2", "arm-neon"}) {
        Workload w = reduce(op, 6, 40, 3);
        w.params["select_last"] = last;
        InputCheck check{11, nullptr, w.dtype, 1e-6};
        check.adjust = [](const schedules::KernelArg&, schedules::Values& v) {
          for (float& x : v) x = std::round(2 * x);
        };
        const schedules::OpTemplate& t = schedules::arg_reduce_template(op);
        std::string skip =
            check_template_inputs(t, w, target, t.fallback(w, target_from_name(target)), check);
        if (!skip.empty()) GTEST_SKIP() << skip;
      }
}

TEST(ReduceTemplateErrors, BadWorkloads) {
  Target x86 = target_from_name("x86-avx512");
  const schedules::OpTemplate& t = schedules::reduce_template("reduce_sum");
  EXPECT_THROW(t.inputs(reduce("reduce_sum", 0, 4, 1)), UserError);
  EXPECT_THROW(schedules::reduce_template("reduce_prod"), UserError);
  Workload w = reduce("reduce_sum", 2, 8, 3);
  EXPECT_THROW(t.instantiate(w, x86, schedules::Config({{"partials", 8}, {"parallel", 0}})),
               UserError);  // partials only for rows (inner 1)
  Workload arg = reduce("arg_max", 2, 8, 1);
  arg.params["select_last"] = 2;
  EXPECT_THROW(schedules::arg_reduce_template("arg_max").space(arg, x86), UserError);
  EXPECT_THROW(schedules::arg_reduce_template("arg_median"), UserError);
  Workload cumsum = reduce("cumsum", 2, 8, 1);
  cumsum.params["reverse"] = -1;
  EXPECT_THROW(schedules::cumsum_template().space(cumsum, x86), UserError);
}

}  // namespace
}  // namespace kiln::testing
