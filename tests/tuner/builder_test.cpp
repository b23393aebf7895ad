// tuner/builder.h and the contract it relies on: OpTemplate::instantiate checks a workload
// and a config once, for every template, before the template schedules anything; the
// builder lowers what the template describes, and compiles it into a shared object.
#include "tuner/builder.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/base/error.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "schedules/data_movement/data_movement.h"
#include "schedules/dense/dense.h"
#include "schedules/dense/lowp.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/epilogue.h"

namespace kiln::tuner {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

Workload dense(int64_t m, int64_t n, int64_t k, DataType t = DataType::f32()) {
  return {"dense", {{"M", m}, {"N", n}, {"K", k}}, t, {}};
}

// The message of the UserError `f` throws ("(no error)" when it throws none).
template <typename F>
std::string user_error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const Target& avx2() {
  static const Target t = target_from_name("x86-avx2");
  return t;
}

TEST(Instantiate, DescribesTheKernelWithoutLoweringIt) {
  const OpTemplate& t = schedules::dense_packed_template();
  Workload w = dense(5, 40, 7);
  w.epilogue = {"bias", "relu"};
  schedules::ScheduledKernel k = t.instantiate(w, avx2(), t.fallback(w, avx2()));
  ASSERT_EQ(k.tensors.size(), 4u);  // A, B (packed), bias, C
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.tensors[1].name(), "B.packed");
  EXPECT_EQ(k.args[1].logical.name, "B");
  EXPECT_TRUE(k.args[1].pack);
  EXPECT_GT(k.args[1].kernel_elements, 40 * 7);  // whole panels
  EXPECT_TRUE(k.args.back().is_output);
  EXPECT_DOUBLE_EQ(k.flops, 2.0 * 5 * 40 * 7);
}

TEST(Instantiate, ChecksTheWorkloadAgainstTheTemplatesDescriptors) {
  const OpTemplate& t = schedules::dense_packed_template();
  Config cfg = t.fallback(dense(8, 8, 8), avx2());
  Workload conv{"conv2d", {{"M", 8}, {"N", 8}, {"K", 8}}, DataType::f32(), {}};
  EXPECT_TRUE(contains(user_error_of([&] { t.instantiate(conv, avx2(), cfg); }),
                       "dense.packed implements 'dense', not 'conv2d'"));
  EXPECT_TRUE(
      contains(user_error_of([&] { t.instantiate(dense(8, 8, 8, DataType::i8()), avx2(), cfg); }),
               "dtype i8 is not supported (valid: f32, f16, bf16)"));
  Workload epi = dense(8, 8, 8);
  epi.epilogue = {"softplus"};
  EXPECT_TRUE(contains(user_error_of([&] { t.instantiate(epi, avx2(), cfg); }),
                       "unknown epilogue 'softplus'"));
  EXPECT_EQ(t.epilogues(), schedules::epilogue_names());
  EXPECT_EQ(schedules::dense_bf16_x86_template().dtypes(), std::vector<DataType>{DataType::bf16()});
}

TEST(Instantiate, OnlyValueParametersMayBeNegative) {
  // pad's value and clip's bounds are values; every other parameter is a size.
  Workload pad{"pad",
               {{"ndim", 1}, {"D0", 4}, {"B0", 1}, {"A0", 2}, {"value", -1.5}},
               DataType::f32(),
               {}};
  const OpTemplate& p = schedules::pad_template();
  EXPECT_NO_THROW(p.instantiate(pad, avx2(), p.fallback(pad, avx2())));
  Workload bad = pad;
  bad.params["ndim"] = -1;
  EXPECT_TRUE(contains(user_error_of([&] { p.instantiate(bad, avx2(), p.fallback(pad, avx2())); }),
                       "shape parameter ndim = -1 is negative"));
  Workload clip{"clip",
                {{"rank", 1}, {"a0", 16}, {"lo", -2.5}, {"hi", -0.5}},
                DataType::f32(),
                {}};
  const OpTemplate& c = schedules::elementwise_flat_template("clip");
  EXPECT_NO_THROW(c.instantiate(clip, avx2(), c.fallback(clip, avx2())));
}

TEST(Instantiate, ChecksTheConfigAgainstTheSpace) {
  const OpTemplate& t = schedules::dense_packed_template();
  Config cfg = t.fallback(dense(8, 8, 8), avx2());
  cfg.set("mr", 3);
  EXPECT_TRUE(contains(user_error_of([&] { t.instantiate(dense(8, 8, 8), avx2(), cfg); }),
                       "knob 'mr' = 3 is not one of its choices"));
}

TEST(Builder, LowersTheTemplatesScheduleUnchanged) {
  const OpTemplate& t = schedules::dense_packed_template();
  Workload w = dense(6, 24, 5);
  Config cfg = t.fallback(w, avx2());
  BuiltKernel k = lower_template(t, w, avx2(), cfg, "my_dense");
  EXPECT_EQ(k.func.name, "my_dense");
  ASSERT_EQ(k.func.args.size(), k.args.size());
  EXPECT_EQ(k.func.args[1]->name, "B.packed");
  schedules::ScheduledKernel s = t.instantiate(w, avx2(), cfg);
  EXPECT_EQ(ir::to_string(k.func.body),
            ir::to_string(lower::lower(s.schedule, s.tensors, "my_dense").body));
  EXPECT_DOUBLE_EQ(k.flops, s.flops);
}

TEST(Builder, WritesASharedObject) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln_builder_test";
  std::filesystem::create_directories(dir);
  std::string so = (dir / "dense.so").string();
  const OpTemplate& t = schedules::dense_packed_template();
  Workload w = dense(4, 16, 4);
  BuiltKernel k = build_template(t, w, avx2(), t.fallback(w, avx2()), "dense_k", so);
  EXPECT_EQ(k.func.name, "dense_k");
  EXPECT_GT(std::filesystem::file_size(so), 0u);
  std::filesystem::remove_all(dir);
  // Invalid input fails before anything is written.
  Config bad = t.fallback(w, avx2());
  bad.set("nr_vecs", 9);
  EXPECT_THROW(build_template(t, w, avx2(), bad, "dense_k", so), UserError);
  EXPECT_FALSE(std::filesystem::exists(so));
}

}  // namespace
}  // namespace kiln::tuner
