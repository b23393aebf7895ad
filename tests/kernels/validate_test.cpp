// The workload validation layer (schedules/validate.h): sizes in range, element counts
// checked for int64 overflow with the parameter named, the memory check of a run. Cheap:
// nothing here lowers or builds a kernel.
#include <gtest/gtest.h>

#include <string>

#include "compiler/base/error.h"
#include "schedules/registry.h"
#include "schedules/shape_form.h"
#include "schedules/validate.h"

namespace kiln::schedules {
namespace {

const Target& host() {
  static const Target t = target_from_name("x86-avx512");
  return t;
}

Workload dense(int64_t m, int64_t n, int64_t k) {
  return {"dense", {{"M", m}, {"N", n}, {"K", k}}, ir::DataType::f32(), {}};
}

Workload relu(int64_t n) {
  return {"relu", {{"rank", 1}, {"a0", n}}, ir::DataType::f32(), {}};
}

// The message of the UserError `f` throws ("" when it throws none).
template <typename F>
std::string user_error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const OpTemplate& dense_template() { return template_named("dense.packed"); }

TEST(Validate, CheckedMulFindsOverflow) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(checked_mul(int64_t{1} << 32, int64_t{1} << 31).has_value());
  EXPECT_FALSE(checked_mul(INT64_MAX, 2).has_value());
}

TEST(Validate, OverflowingProductNamesWorkloadArgumentAndParameter) {
  const int64_t big = int64_t{1} << 32;
  std::string msg = user_error_of([&] { dense_template().validate(dense(big, big + 1, 8), host()); });
  EXPECT_NE(msg.find("dense K=8 M=4294967296 N=4294967297"), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument C [4294967296, 4294967297]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("overflows at dimension 1 = 4294967297, parameter N"), std::string::npos)
      << msg;
  // instantiate runs the same check before the template sees the workload.
  msg = user_error_of([&] {
    dense_template().instantiate(dense(big, big + 1, 8), host(), Config());
  });
  EXPECT_NE(msg.find("more elements than int64 holds"), std::string::npos) << msg;
}

TEST(Validate, ParametersMustBeInRange) {
  std::string msg = user_error_of([&] { dense_template().validate(dense(4, 0, 4), host()); });
  EXPECT_NE(msg.find("parameter N = 0 must be positive"), std::string::npos) << msg;
  msg = user_error_of([&] { dense_template().validate(dense(4, -3, 4), host()); });
  EXPECT_NE(msg.find("shape parameter N = -3 is negative"), std::string::npos) << msg;
  msg = user_error_of([&] { dense_template().validate(dense(4, int64_t{1} << 41, 4), host()); });
  EXPECT_NE(msg.find("parameter N = 2199023255552 is out of range (at most 2^40"),
            std::string::npos)
      << msg;
  Workload bad_dtype = dense(4, 4, 4);
  bad_dtype.dtype = ir::DataType::i8();
  msg = user_error_of([&] { dense_template().validate(bad_dtype, host()); });
  EXPECT_NE(msg.find("dtype i8 is not supported (valid: f32"), std::string::npos) << msg;
}

TEST(Validate, ValueParametersMayBeNegative) {
  Workload clip = {"clip", {{"rank", 1}, {"a0", 8}, {"lo", -6.0}, {"hi", 6.0}},
                   ir::DataType::f32(), {}};
  EXPECT_NO_THROW(template_named("elementwise.flat.clip").validate(clip, host()));
}

TEST(Validate, HugeReluIsValidButItsRunNeedsMoreMemoryThanThere) {
  const OpTemplate& tpl = template_named("elementwise.flat.relu");
  const Workload w = relu(int64_t{1} << 32);
  EXPECT_NO_THROW(tpl.validate(w, host()));
  // Input and output of 2^32 elements: at least 8 bytes each on the host.
  EXPECT_GE(bytes_for_run(tpl, w), int64_t{1} << 36);
  std::string msg =
      user_error_of([&] { check_memory_for_run(tpl, w, int64_t{16} << 30); });
  EXPECT_NE(msg.find("relu a0=4294967296 rank=1 f32: a run needs "), std::string::npos) << msg;
  EXPECT_NE(msg.find("a [4294967296], out [4294967296]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("but only 17179869184 bytes (16.0 GiB) are available"), std::string::npos)
      << msg;
  // Unknown memory: nothing to check. Enough memory: no error.
  EXPECT_NO_THROW(check_memory_for_run(tpl, w, std::nullopt));
  EXPECT_NO_THROW(check_memory_for_run(tpl, relu(1024), int64_t{16} << 30));
}

TEST(Validate, AvailableMemoryIsReadOnLinux) {
  std::optional<int64_t> bytes = available_memory_bytes();
  ASSERT_TRUE(bytes.has_value());
  EXPECT_GT(*bytes, 0);
}

TEST(Validate, EveryTemplateRejectsAnOverflowingWorkload) {
  // Every size parameter of a template's --shape form at 2^39: too many elements for some
  // argument of every op that has a --shape form, and a message rather than a wrong kernel.
  for (const OpTemplate* tpl : all_templates()) {
    const std::vector<std::string> form = shape_form(tpl->op());
    if (form.empty()) continue;
    Workload w{tpl->op(), {}, ir::DataType::f32(), {}};
    for (const std::string& p : form) w.params[p] = int64_t{1} << 39;
    if (tpl->op() == "layout_transform") w.params["block"] = 8;
    std::string msg = user_error_of([&] { tpl->validate(w, host()); });
    EXPECT_FALSE(msg.empty()) << tpl->name();
  }
}

}  // namespace
}  // namespace kiln::schedules
