// `kiln compile --dtype int8 --calibration DIR` through the real binary: one step does what
// `kiln quantize` then `kiln compile` do (the same artifact, byte for byte), says what it
// quantized, and its model answers as the float model does within the quantization error.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/process/temp_dir.h"
#include "tests/graph/model_builder.h"
#include "tests/kiln_binary.h"
#include "tools/npy_file.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;
using kiln::test::KilnOutput;
using kiln::test::run_kiln;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// x [1, 8, 10, 10] -> Conv 1x1 (16) -> Relu -> Conv 3x3 stride 2 (16) -> Relu ->
// GlobalAveragePool -> Flatten -> Gemm (4): layers that stay int8 on any x86 CPU (no Winograd
// candidate, enough input channels: network/int8_choice.h).
std::string float_cnn() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{8}, int64_t{10}, int64_t{10}});
  b.initializer("w1", random_tensor({16, 8, 1, 1}, 1, 0.4f));
  b.initializer("b1", random_tensor({16}, 2, 0.1f));
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("w2", random_tensor({16, 16, 3, 3}, 3, 0.2f));
  b.initializer("b2", random_tensor({16}, 4, 0.1f));
  onnx::NodeProto& c2 = b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  attr_ints(c2, "pads", {1, 1, 1, 1});
  attr_ints(c2, "strides", {2, 2});
  b.node("Relu", {"c2"}, {"r2"});
  b.node("GlobalAveragePool", {"r2"}, {"p"});
  b.node("Flatten", {"p"}, {"f"});
  b.initializer("w3", random_tensor({16, 4}, 5, 0.5f));
  b.initializer("b3", random_tensor({4}, 6, 0.1f));
  b.node("Gemm", {"f", "w3", "b3"}, {"y"}, "fc");
  b.output("y");
  return b.bytes();
}

void save_sample(const std::string& path, uint64_t seed) {
  const graph::HostTensor t = random_tensor({1, 8, 10, 10}, seed, 1.0f);
  std::vector<float> v(t.data<float>(), t.data<float>() + t.numel());
  std::string bytes(v.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());
  tools::write_npy(path, "f32", {1, 8, 10, 10}, bytes);
}

std::vector<float> output_of(const std::string& dir) {
  tools::TensorFile y = tools::read_tensor_file(dir + "/y.npy");
  std::vector<float> v(y.bytes.size() / sizeof(float));
  std::memcpy(v.data(), y.bytes.data(), y.bytes.size());
  return v;
}

TEST(CompileInt8Cli, OneStepIsQuantizeThenCompileAndStaysNearTheFloatModel) {
  const TempDir dir("kiln-compile-int8");
  std::ofstream(dir.file("net.onnx"), std::ios::binary) << float_cnn();
  std::filesystem::create_directory(dir.file("calib"));
  std::filesystem::create_directory(dir.file("q"));
  for (int i = 0; i < 4; ++i)
    save_sample(dir.file("calib/s" + std::to_string(i) + ".npy"), 100 + i);
  save_sample(dir.file("x.npy"), 7);

  const KilnOutput one =
      run_kiln("compile " + dir.file("net.onnx") + " --dtype int8 --calibration " +
               dir.file("calib") + " -o " + dir.file("one"));
  ASSERT_EQ(one.exit_code(), 0) << one.text;
  EXPECT_NE(one.text.find("quantized"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("weights (int8, per channel)"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("relative rms"), std::string::npos) << one.text;

  // The two-step path gives the same artifact; the model keeps the float file's name.
  const KilnOutput q = run_kiln("quantize " + dir.file("net.onnx") + " --calibration " +
                                dir.file("calib") + " -o " + dir.file("q/net.onnx"));
  ASSERT_EQ(q.exit_code(), 0) << q.text;
  const KilnOutput two = run_kiln("compile " + dir.file("q/net.onnx") + " -o " + dir.file("two"));
  ASSERT_EQ(two.exit_code(), 0) << two.text;
  for (const char* f : {"model.so", "model.params", "model.h"})
    EXPECT_EQ(file_bytes(dir.file(std::string("one/") + f)),
              file_bytes(dir.file(std::string("two/") + f)))
        << f;
  EXPECT_NE(file_bytes(dir.file("one/model.h")).find("kiln_model_net"), std::string::npos);
  // The quantized layers are in the artifact: int8 kernels in its layer table.
  EXPECT_NE(file_bytes(dir.file("one/model.json")).find("int8"), std::string::npos);

  // Near the float model: within a few quanta of the logits' range.
  ASSERT_EQ(run_kiln("compile " + dir.file("net.onnx") + " -o " + dir.file("f32")).exit_code(), 0);
  for (const char* m : {"one", "f32"}) {
    const KilnOutput r =
        run_kiln("run " + dir.file(m) + " --runs 1 --input x=" + dir.file("x.npy") + " --output " +
                 dir.file(std::string("out_") + m));
    ASSERT_EQ(r.exit_code(), 0) << r.text;
  }
  const std::vector<float> i8 = output_of(dir.file("out_one")),
                           f32 = output_of(dir.file("out_f32"));
  ASSERT_EQ(i8.size(), 4u);
  ASSERT_EQ(f32.size(), 4u);
  float range = 0;
  for (float v : f32) range = std::max(range, std::fabs(v));
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(i8[i], f32[i], 0.05f * range + 1e-3f) << i;
}

}  // namespace
}  // namespace kiln::network::test
