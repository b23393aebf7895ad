// Never a plausible wrong answer: an input of another shape is refused by the runtime (C++ and
// C API) instead of running on its bytes, an index out of range is an error (constant ones
// at compile time naming the node, computed ones by the model's run), and real attributes
// (Clip's bounds, Pad's value) are carried exactly, "no bound" (±FLT_MAX) included.
#include <gtest/gtest.h>

#include <cfloat>
#include <filesystem>
#include <fstream>

#include "network/compile_network.h"
#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"
#include "schedules/registry.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tuner/record.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::ModelBuilder;

// `bytes` as dir/net.onnx; returns its path.
std::string write_onnx(const TempDir& dir, const std::string& bytes) {
  const std::string onnx = dir.path() + "/net.onnx";
  std::ofstream(onnx, std::ios::binary) << bytes;
  return onnx;
}

// Compiles `bytes` for the host into dir/out and returns that folder.
std::string compile_into(const TempDir& dir, const std::string& bytes) {
  CompileOptions o{write_onnx(dir, bytes), host_target(), {}, {}, dir.path() + "/out"};
  compile_network(o);
  return dir.path() + "/out";
}

std::string embedding_model() {
  ModelBuilder b(13);
  b.input("ids", DataType::i64(), {2, 3});
  b.initializer("table", graph::test::random_tensor({5, 8}, 1));
  b.node("Gather", {"table", "ids"}, {"emb"}, "lookup");
  b.output("emb");
  return b.bytes();
}

TEST(ExactAnswers, ComputedIndexOutOfRangeIsAnErrorNotAClampedRow) {
  TempDir dir;
  const std::string out = compile_into(dir, embedding_model());
  Model m = Model::load(out + "/model.so", out + "/model.params", 1);
  std::vector<float> emb(2 * 3 * 8);
  for (int64_t bad : {int64_t{5}, int64_t{-6}, int64_t{1000000}}) {
    std::vector<int64_t> ids = {0, 1, 4, -5, bad, 2};
    try {
      m.run({ids.data()}, {emb.data()});
      ADD_FAILURE() << "index " << bad << " ran";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
  }
  // In range, negative ones included, it runs; and the C API says the same with its code.
  std::vector<int64_t> ids = {0, 1, 4, -5, -1, 2};
  m.run({ids.data()}, {emb.data()});
  kiln_model* cm = nullptr;
  ASSERT_EQ(kiln_model_load((out + "/model.so").c_str(), (out + "/model.params").c_str(), 1, &cm),
            KILN_OK);
  ids[4] = 7;
  const void* in[] = {ids.data()};
  void* outs[] = {emb.data()};
  EXPECT_EQ(kiln_model_run(cm, in, outs), KILN_ERROR_INVALID_INPUT);
  EXPECT_NE(std::string(kiln_last_error()).find("out of range"), std::string::npos);
  kiln_model_free(cm);
}

TEST(ExactAnswers, ConstantIndexOutOfRangeIsACompileErrorNamingTheNode) {
  for (int64_t bad : {int64_t{10}, int64_t{-6}}) {
    ModelBuilder b(13);
    b.input("x", DataType::f32(), {5, 4});
    b.initializer("i", HostTensor::i64_vector({1, bad}));
    b.node("Gather", {"x", "i"}, {"y"}, "picky_gather");
    b.output("y");
    TempDir dir;
    try {
      compile_into(dir, b.bytes());
      ADD_FAILURE() << "index " << bad << " compiled";
    } catch (const UserError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("picky_gather"), std::string::npos) << msg;
      EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out/model.so"));
  }
}

// Every shape but the model's own is refused before anything runs, by the C++ and C APIs: the
// same element count in another order (NHWC for NCHW), flat, with a dimension more or less.
TEST(ExactAnswers, AnyOtherInputShapeIsRefused) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 3, 4, 2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string out = compile_into(dir, b.bytes());
  Model m = Model::load(out + "/model.so", out + "/model.params", 1);
  std::vector<float> x(24, 1.0f), y(24);
  const std::vector<std::vector<int64_t>> wrong = {
      {1, 4, 2, 3}, {24}, {1, 3, 4, 2, 1}, {3, 4, 2}, {1, 3, 2, 4}, {2, 3, 4, 2}, {}, {1, 3, 4, 0}};
  kiln_model* cm = nullptr;
  ASSERT_EQ(kiln_model_load((out + "/model.so").c_str(), (out + "/model.params").c_str(), 1, &cm),
            KILN_OK);
  void* outs[] = {y.data()};
  for (const std::vector<int64_t>& shape : wrong) {
    Model::Tensor t{x.data(), shape};
    try {
      m.run_shaped(std::span<const Model::Tensor>(&t, 1), std::span<void* const>(outs, 1));
      ADD_FAILURE() << "a shape of " << shape.size() << " dims ran";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find("the model takes (1, 3, 4, 2)"), std::string::npos)
          << e.what();
    }
    kiln_tensor ct{x.data(), static_cast<int32_t>(shape.size()), shape.data()};
    EXPECT_EQ(kiln_model_run_shaped(cm, &ct, 1, outs), KILN_ERROR_INVALID_INPUT);
  }
  const std::vector<int64_t> right = {1, 3, 4, 2};
  kiln_tensor ct{x.data(), 4, right.data()};
  EXPECT_EQ(kiln_model_run_shaped(cm, &ct, 1, outs), KILN_OK) << kiln_last_error();
  const kiln_tensor two[] = {ct, ct};  // one input too many
  EXPECT_EQ(kiln_model_run_shaped(cm, two, 2, outs), KILN_ERROR_INVALID_INPUT);
  kiln_model_free(cm);
  Model::Tensor t{x.data(), right};
  m.run_shaped(std::span<const Model::Tensor>(&t, 1), std::span<void* const>(outs, 1));
  EXPECT_EQ(y[0], 1.0f);
}

// Exporters write "no bound" as ±FLT_MAX: values past 1e12 must pass through unchanged. Bounds
// and pad values that are no multiple of 0.001 are carried as the model states them.
TEST(ExactAnswers, ClipAndPadRealsAreExact) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 2, 3, 3});
  b.initializer("lo", graph::test::f32_tensor({}, {-FLT_MAX}));
  b.initializer("hi", graph::test::f32_tensor({}, {FLT_MAX}));
  b.node("Clip", {"x", "lo", "hi"}, {"open"});
  b.initializer("lo2", graph::test::f32_tensor({}, {-0.25005}));
  b.initializer("hi2", graph::test::f32_tensor({}, {0.33333}));
  b.node("Clip", {"x", "lo2", "hi2"}, {"narrow"});
  b.initializer("pads", HostTensor::i64_vector({0, 0, 1, 1, 0, 0, 1, 1}));
  b.initializer("value", graph::test::f32_tensor({}, {0.1234567}));
  b.node("Pad", {"narrow", "pads", "value"}, {"padded"});
  b.output("open");
  b.output("padded");
  HostTensor x = graph::test::f32_tensor({1, 2, 3, 3}, {1e30, -1e30, 3e12, -3e12, 0.3, -0.3, 0.2,
                                                        -0.2, 0.25, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_host_matches_reference(b.bytes(), {}, {{"x", x}});
}

// A size bound beyond what any machine could hold is refused before anything is allocated,
// naming the bytes; never std::bad_alloc.
TEST(ExactAnswers, HugeBindingsAreRefusedNamingTheBytes) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {std::string("batch"), int64_t{16}});
  b.initializer("w", graph::test::random_tensor({16, 8}, 1));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string onnx = write_onnx(dir, b.bytes());
  for (int64_t batch : {int64_t{1} << 42, int64_t{1} << 58}) {
    CompileOptions o{onnx, host_target(), {}, {{"batch", {batch}}}, dir.path() + "/out"};
    try {
      compile_network(o);
      ADD_FAILURE() << "compiled batch " << batch;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out"));
  }
}

// `compile --records` with a file that holds no usable record says so, and why.
TEST(ExactAnswers, RecordsThatDoNotApplyAreExplained) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {4, 16});
  b.initializer("w", graph::test::random_tensor({16, 8}, 1));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string onnx = write_onnx(dir, b.bytes());
  const std::string junk = dir.path() + "/junk.jsonl";
  std::ofstream(junk, std::ios::binary) << std::string("\x01\x02garbage\nmore garbage\n");
  // A record of a dense workload for another target (arm-neon), valid in itself.
  tuner::TuningRecord r;
  r.target = target_from_name("arm-neon");
  r.template_name = "dense.packed";
  r.workload = {"dense", {{"M", 4}, {"N", 8}, {"K", 16}}, ir::DataType::f32(), {}};
  r.config = schedules::template_named(r.template_name).fallback(r.workload, r.target);
  r.result.costs = {1e-6};
  r.flops = 1024;
  const std::string other = dir.path() + "/other.jsonl";
  std::ofstream(other) << tuner::record_to_json(r) << "\n";
  CompileOptions o{onnx, host_target(), {junk, other}, {}, dir.path() + "/out"};
  const CompileReport rep = compile_network(o);
  const std::string& use = rep.records_use;
  EXPECT_NE(use.find("records: 3 lines read, 1 valid, 0 for target"), std::string::npos) << use;
  EXPECT_NE(use.find("2 lines skipped as invalid (first: " + junk + ":1:"), std::string::npos)
      << use;
  EXPECT_NE(use.find("1 records for another target, arm-neon"), std::string::npos) << use;
  EXPECT_NE(use.find("warning: no record of the given logs applies"), std::string::npos) << use;
  EXPECT_NE(format_report(rep).find(use), std::string::npos);
}

}  // namespace
}  // namespace kiln::network::test
