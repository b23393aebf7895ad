// `kiln run` with the inputs and outputs real models have: int64 token ids given as an int64
// .npy (or an int32 or float one, converted where every value survives), a bool output, and
// output names that are paths ("/emb/Gather_output_0"), all through the real binary.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "runtime/process/temp_dir.h"
#include "tests/graph/model_builder.h"
#include "tests/kiln_binary.h"
#include "tools/npy_file.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::ModelBuilder;
using kiln::test::KilnOutput;
using kiln::test::run_kiln;

template <typename T>
void save(const std::string& path, const std::string& dtype, const std::vector<T>& v,
          const std::vector<int64_t>& shape = {2, 3}) {
  std::string bytes(v.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());
  tools::write_npy(path, dtype, shape, bytes);
}

// ids [2, 3] (i64) -> an embedding lookup "/emb/Gather_output_0" [2, 3, 4] and "is_two"
// (ids == 2, bool); the table's row r holds 10 r + column.
class RunTensors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("kiln-run-tensors-test");
    ModelBuilder b(13);
    b.input("ids", DataType::i64(), {2, 3});
    std::vector<float> table;
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < 4; ++c) table.push_back(10.0f * r + c);
    b.initializer("table",
                  graph::test::f32_tensor({5, 4}, std::vector<double>(table.begin(), table.end())));
    b.node("Gather", {"table", "ids"}, {"/emb/Gather_output_0"});
    b.initializer("two", HostTensor::from_i64(DataType::i64(), {}, {2}));
    b.node("Equal", {"ids", "two"}, {"is_two"});
    b.output("/emb/Gather_output_0");
    b.output("is_two");
    std::ofstream(dir_->file("net.onnx"), std::ios::binary) << b.bytes();
    KilnOutput o =
        run_kiln("compile " + dir_->file("net.onnx") + " --target host -o " + dir_->file("model"));
    ASSERT_EQ(o.exit_code(), 0) << o.text;
  }
  static void TearDownTestSuite() { delete dir_; }

  // kiln run with ids from `file`, outputs into DIR/out.
  static KilnOutput run(const std::string& file) {
    return run_kiln("run " + dir_->file("model") + " --runs 1 --input ids=" + file + " --output " +
                dir_->file("out"));
  }
  // The outputs of ids {0, 2, 4, 1, 2, 3} as they must be.
  static void expect_outputs() {
    const std::vector<int> ids = {0, 2, 4, 1, 2, 3};
    tools::TensorFile emb = tools::read_tensor_file(dir_->file("out/_emb_Gather_output_0.npy"));
    ASSERT_EQ(emb.dtype, "f32");
    ASSERT_EQ(emb.shape, (std::vector<int64_t>{2, 3, 4}));
    std::vector<float> got(24);
    std::memcpy(got.data(), emb.bytes.data(), emb.bytes.size());
    for (size_t i = 0; i < 6; ++i)
      for (size_t c = 0; c < 4; ++c) EXPECT_EQ(got[i * 4 + c], 10.0f * ids[i] + c) << i << "," << c;
    tools::TensorFile is_two = tools::read_tensor_file(dir_->file("out/is_two.npy"));
    ASSERT_EQ(is_two.dtype, "bool");
    ASSERT_EQ(is_two.bytes.size(), 6u);
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(is_two.bytes[i], ids[i] == 2 ? 1 : 0) << i;
  }
  static TempDir* dir_;
};
TempDir* RunTensors::dir_ = nullptr;

TEST_F(RunTensors, Int64TokenIdsGiveTypedOutputsUnderFileSafeNames) {
  save<int64_t>(dir_->file("ids.npy"), "i64", {0, 2, 4, 1, 2, 3});
  KilnOutput o = run(dir_->file("ids.npy"));
  ASSERT_EQ(o.exit_code(), 0) << o.text;
  EXPECT_NE(o.text.find("_emb_Gather_output_0.npy"), std::string::npos) << o.text;
  expect_outputs();
}

TEST_F(RunTensors, Int32AndWholeFloatIdsAreConverted) {
  save<int32_t>(dir_->file("ids32.npy"), "i32", {0, 2, 4, 1, 2, 3});
  KilnOutput o = run(dir_->file("ids32.npy"));
  ASSERT_EQ(o.exit_code(), 0) << o.text;
  expect_outputs();
  save<float>(dir_->file("idsf.npy"), "f32", {0, 2, 4, 1, 2, 3});
  o = run(dir_->file("idsf.npy"));
  ASSERT_EQ(o.exit_code(), 0) << o.text;
  expect_outputs();
}

TEST_F(RunTensors, ValuesThatDoNotConvertAreOneLineErrors) {
  save<float>(dir_->file("frac.npy"), "f32", {0, 2, 4.5f, 1, 2, 3});
  KilnOutput o = run(dir_->file("frac.npy"));
  EXPECT_EQ(o.exit_code(), 2) << o.text;
  EXPECT_NE(o.text.find("frac.npy (input ids): value 4.5 at index 2 (f32) is not exact as i64"),
            std::string::npos)
      << o.text;
  // A complex .npy: numpy's '<c8', which kiln has no type for.
  std::ofstream(dir_->file("complex.npy"), std::ios::binary)
      << std::string("\x93NUMPY\x01\x00\x40\x00", 10)
      << "{'descr': '<c8', 'fortran_order': False, 'shape': (6,), }      \n"
      << std::string(48, '\0');
  o = run(dir_->file("complex.npy"));
  EXPECT_EQ(o.exit_code(), 2) << o.text;
  EXPECT_NE(o.text.find(".npy dtype '<c8' is not one kiln reads"), std::string::npos) << o.text;
}

// The same six ids in another shape are another input: refused, never run on their bytes.
TEST_F(RunTensors, AnArrayOfAnotherShapeIsRefused) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 2}, {6}, {1, 2, 3}, {2, 3, 1}}) {
    save<int64_t>(dir_->file("shaped.npy"), "i64", {0, 2, 4, 1, 2, 3}, shape);
    KilnOutput o = run(dir_->file("shaped.npy"));
    EXPECT_EQ(o.exit_code(), 2) << o.text;
    EXPECT_NE(o.text.find("but the model's input ids has shape (2, 3)"), std::string::npos)
        << o.text;
  }
}

// A path may hold '=' (split at the first); a folder given as a file is the user's error.
TEST_F(RunTensors, PathsWithEqualsSignsAndFoldersAsInputs) {
  save<int64_t>(dir_->file("a=b.npy"), "i64", {0, 2, 4, 1, 2, 3});
  KilnOutput o = run(dir_->file("a=b.npy"));
  ASSERT_EQ(o.exit_code(), 0) << o.text;
  expect_outputs();
  o = run(dir_->path());
  EXPECT_EQ(o.exit_code(), 2) << o.text;
}

// ONNX makes an index outside [-N, N-1] an error: so does the model's run, exit 2, one line.
TEST_F(RunTensors, AnIndexOutOfRangeIsAnError) {
  for (int64_t bad : {int64_t{5}, int64_t{-6}, int64_t{1000000}}) {
    save<int64_t>(dir_->file("far.npy"), "i64", {0, 2, bad, 1, 2, 3});
    KilnOutput o = run(dir_->file("far.npy"));
    EXPECT_EQ(o.exit_code(), 2) << o.text;
    EXPECT_NE(o.text.find("out of range"), std::string::npos) << o.text;
  }
}

}  // namespace
}  // namespace kiln::network::test
