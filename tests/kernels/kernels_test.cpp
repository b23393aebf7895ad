// Matmul, conv2d and broadcast elementwise kernels, each under several schedules, on every
// target preset and in every dtype the preset has, against a plain reference.
#include <gtest/gtest.h>

#include <functional>

#include "tests/kernels/kernel_harness.h"
#include "compiler/lower/lower.h"
#include "schedules/conv2d/common.h"
#include "schedules/dense/dense.h"
#include "schedules/elementwise/elementwise.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using ir::IterVar;
using te::Schedule;
using te::Tensor;

// ---- schedules --------------------------------------------------------------------------

using DenseSchedule = std::function<void(Schedule&, const schedules::DenseOp&)>;

const std::vector<std::pair<std::string, DenseSchedule>>& dense_schedules() {
  static const std::vector<std::pair<std::string, DenseSchedule>> k = {
      {"naive", [](Schedule&, const schedules::DenseOp&) {}},
      // non-dividing tiles, vectorized inner loop with a tail, parallel outer loop
      {"tiled_vector_parallel",
       [](Schedule& s, const schedules::DenseOp& op) {
         te::Stage c = s[op.c];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 5, 16);
         c.reorder({io, jo, c.reduce_axis(0), ii, ji});
         c.vectorize(ji);
         c.parallel(io);
       }},
      // register tile: cache_write + compute_at, k outermost in the tile, unrolled rows
      {"register_tile",
       [](Schedule& s, const schedules::DenseOp& op) {
         Tensor acc = s.cache_write(op.c);
         te::Stage c = s[op.c];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 4, 32);
         c.vectorize(ji);
         c.parallel(io);
         te::Stage a = s[acc];
         a.compute_at(c, jo);
         auto [jvo, jvi] = a.split(a.axis(1), 16);
         a.reorder({a.reduce_axis(0), a.axis(0), jvo, jvi});
         a.unroll(a.axis(0));
         a.unroll(jvo);
         a.vectorize(jvi);
       }},
      // split reduction, fused parallel outer loops, unrolled k
      {"split_k_fused",
       [](Schedule& s, const schedules::DenseOp& op) {
         te::Stage c = s[op.c];
         auto [ko, ki] = c.split(c.reduce_axis(0), 4);
         auto [jo, ji] = c.split(c.axis(1), 8);
         c.reorder({c.axis(0), jo, ko, ki, ji});
         IterVar f = c.fuse(c.axis(0), jo);
         c.parallel(f);
         c.unroll(ki);
         c.vectorize(ji);
       }},
  };
  return k;
}

using ConvSchedule = std::function<void(Schedule&, const schedules::Conv2dOp&)>;

const std::vector<std::pair<std::string, ConvSchedule>>& conv_schedules() {
  static const std::vector<std::pair<std::string, ConvSchedule>> k = {
      {"naive_inline_pad",
       [](Schedule& s, const schedules::Conv2dOp& op) { s[op.pad].compute_inline(); }},
      {"pad_root_vector_x",
       [](Schedule& s, const schedules::Conv2dOp& op) {
         te::Stage c = s[op.out];
         auto [xo, xi] = c.split(c.axis(3), 8);
         c.reorder({c.axis(0), c.axis(1), c.axis(2), xo, c.reduce_axis(0), c.reduce_axis(1),
                    c.reduce_axis(2), xi});
         c.vectorize(xi);
         c.parallel(c.fuse(c.axis(0), c.axis(1)));
       }},
      {"cache_write_tile",
       [](Schedule& s, const schedules::Conv2dOp& op) {
         s[op.pad].compute_inline();
         Tensor acc = s.cache_write(op.out);
         te::Stage c = s[op.out];
         auto [oo, oi] = c.split(c.axis(1), 4);
         auto [xo, xi] = c.split(c.axis(3), 8);
         c.reorder({c.axis(0), oo, c.axis(2), xo, oi, xi});
         c.vectorize(xi);
         c.parallel(oo);
         te::Stage a = s[acc];
         a.compute_at(c, xo);
         a.reorder({a.axis(0), a.reduce_axis(0), a.reduce_axis(1), a.reduce_axis(2), a.axis(1),
                    a.axis(2), a.axis(3)});
         a.unroll(a.axis(1));
         a.vectorize(a.axis(3));
       }},
      {"pad_at_row",
       [](Schedule& s, const schedules::Conv2dOp& op) {
         te::Stage c = s[op.out];
         s[op.pad].compute_at(c, c.axis(2));
         c.reorder({c.axis(0), c.axis(1), c.axis(2), c.reduce_axis(0), c.reduce_axis(1),
                    c.reduce_axis(2), c.axis(3)});
         c.unroll(c.reduce_axis(2));
         c.vectorize(c.axis(3));
       }},
  };
  return k;
}

using EltSchedule = std::function<void(Schedule&, const schedules::ElementwiseOp&)>;

const std::vector<std::pair<std::string, EltSchedule>>& elementwise_schedules() {
  static const std::vector<std::pair<std::string, EltSchedule>> k = {
      {"naive", [](Schedule&, const schedules::ElementwiseOp&) {}},
      {"inline_fused_vector_parallel",
       [](Schedule& s, const schedules::ElementwiseOp& op) {
         s[op.scaled].compute_inline();
         te::Stage o = s[op.out];
         IterVar f = o.fuse(o.axis(0), o.axis(1));
         auto [fo, fi] = o.split(f, 16);
         o.vectorize(fi);
         o.parallel(fo);
       }},
      {"inline_vector_tail",
       [](Schedule& s, const schedules::ElementwiseOp& op) {
         s[op.scaled].compute_inline();
         te::Stage o = s[op.out];
         auto [jo, ji] = o.split(o.axis(1), 8);
         o.vectorize(ji);
         o.unroll(jo);
       }},
      {"producer_at_row",
       [](Schedule& s, const schedules::ElementwiseOp& op) {
         te::Stage o = s[op.out];
         auto [io, ii] = o.split(o.axis(0), 2);
         s[op.scaled].compute_at(o, ii);
         s[op.scaled].vectorize(s[op.scaled].axis(1));
         o.parallel(io);
       }},
  };
  return k;
}

// ---- the test matrix ----------------------------------------------------------------------

const std::vector<std::string> kTargets = {"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16",
                                           "arm-bf16"};

std::vector<DataType> dtypes_of(const std::string& target) {
  if (target == "arm-fp16") return {DataType::f32(), DataType::f16()};
  if (target == "arm-bf16") return {DataType::f32(), DataType::f16(), DataType::bf16()};
  if (target == "x86-avx512") return {DataType::f32(), DataType::f16(), DataType::bf16()};
  if (target == "x86-avx2") return {DataType::f32(), DataType::f16()};
  return {DataType::f32()};
}

struct Case {
  std::string op;
  size_t schedule;
  std::string target;
  DataType dtype;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string sched = c.op == "dense"  ? dense_schedules()[c.schedule].first
                      : c.op == "conv" ? conv_schedules()[c.schedule].first
                                       : elementwise_schedules()[c.schedule].first;
  std::string n = c.op + "_" + sched + "_" + c.target + "_" + c.dtype.str();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string& t : kTargets)
    for (DataType d : dtypes_of(t)) {
      for (size_t i = 0; i < dense_schedules().size(); ++i) cases.push_back({"dense", i, t, d});
      for (size_t i = 0; i < conv_schedules().size(); ++i) cases.push_back({"conv", i, t, d});
      for (size_t i = 0; i < elementwise_schedules().size(); ++i)
        cases.push_back({"elementwise", i, t, d});
    }
  return cases;
}

class KernelTest : public ::testing::TestWithParam<Case> {
 protected:
  void check(const ir::LoweredFunc& f, const std::vector<Bytes>& args, int out_index,
             const std::vector<float>& want) {
    const Case& c = GetParam();
    TargetRun r = run_on_target(f, c.target, args, {out_index});
    if (!r.skip_reason.empty()) GTEST_SKIP() << r.skip_reason;
    EXPECT_TRUE(all_close(decode(r.outputs[0], c.dtype), want, tolerance(c.dtype)));
  }
};

TEST_P(KernelTest, MatchesReference) {
  const Case& c = GetParam();
  if (c.op == "dense") {
    schedules::DenseShape shape{37, 53, 29};
    auto op = schedules::dense_compute(shape, c.dtype, c.dtype);
    Schedule s({op.c});
    // Half-precision outputs add a cast stage; the schedules apply to the f32 accumulation.
    Tensor acc = c.dtype == DataType::f32() ? op.c : op.c.op()->inputs[0];
    dense_schedules()[c.schedule].second(s, {op.a, op.b, acc});
    ir::LoweredFunc f = lower::lower(s, {op.a, op.b, op.c}, "dense");
    auto a = random_values(shape.m * shape.k, 1, c.dtype);
    auto b = random_values(shape.k * shape.n, 2, c.dtype);
    std::vector<float> want(shape.m * shape.n);
    schedules::dense_reference(shape, a.data(), b.data(), want.data());
    for (float& w : want) w = round_to(w, c.dtype);
    check(f, {encode(a, c.dtype), encode(b, c.dtype), Bytes(want.size() * c.dtype.bytes())}, 2,
          want);
  } else if (c.op == "conv") {
    schedules::Conv2dShape shape{1, 5, 13, 13, 7, 3, 3, 1, 1};
    if (c.schedule == 1) shape.stride = 2;  // one schedule on a strided convolution
    auto op = schedules::conv2d_compute(shape, c.dtype, c.dtype);
    Schedule s({op.out});
    Tensor acc = c.dtype == DataType::f32() ? op.out : op.out.op()->inputs[0];
    conv_schedules()[c.schedule].second(s, {op.data, op.weight, op.pad, acc});
    ir::LoweredFunc f = lower::lower(s, {op.data, op.weight, op.out}, "conv");
    auto d = random_values(shape.n * shape.c * shape.h * shape.w, 3, c.dtype);
    auto w = random_values(shape.o * shape.c * shape.kh * shape.kw, 4, c.dtype);
    std::vector<float> want(shape.n * shape.o * shape.out_h() * shape.out_w());
    schedules::conv2d_reference(shape, d.data(), w.data(), want.data());
    for (float& x : want) x = round_to(x, c.dtype);
    check(f, {encode(d, c.dtype), encode(w, c.dtype), Bytes(want.size() * c.dtype.bytes())}, 2,
          want);
  } else {
    schedules::ElementwiseShape shape{37, 61};
    auto op = schedules::scale_bias_relu_compute(shape, c.dtype);
    Schedule s({op.out});
    elementwise_schedules()[c.schedule].second(s, op);
    ir::LoweredFunc f = lower::lower(s, {op.a, op.scale, op.bias, op.out}, "elementwise");
    auto a = random_values(shape.rows * shape.cols, 5, c.dtype);
    auto sc = random_values(shape.cols, 6, c.dtype);
    auto bi = random_values(shape.cols, 7, c.dtype);
    std::vector<float> want(shape.rows * shape.cols);
    schedules::scale_bias_relu_reference(shape, a.data(), sc.data(), bi.data(), want.data());
    for (float& x : want) x = round_to(x, c.dtype);
    check(f,
          {encode(a, c.dtype), encode(sc, c.dtype), encode(bi, c.dtype),
           Bytes(want.size() * c.dtype.bytes())},
          3, want);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTargets, KernelTest, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace kiln::testing
