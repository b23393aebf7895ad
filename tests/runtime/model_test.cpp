// kiln::Model and its C API on artifacts built in the test (test_model.h): outputs against the
// reference, descriptors, no heap allocation inside run(), and every refusal a user can meet
// (damaged or foreign params, a damaged .so, a .so that is not a model, another architecture).
#include "kiln/model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/runtime/alloc_counter.h"
#include "compiler/codegen/build.h"
#include "compiler/ir/op.h"
#include "kiln/params.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"
#include "runtime/process/temp_dir.h"
#include "tests/runtime/test_model.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// Expects `body` to throw RuntimeError with `code` and a message containing every fragment.
template <typename F>
void expect_error(F&& body, ErrorCode code, std::initializer_list<std::string> fragments) {
  try {
    body();
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "'" << f << "' not in: " << e.what();
  }
}

class ModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("kiln-model-test");
    model_ = new TestModel(make_test_model());
    write_artifact(*model_, target_from_name("host"), dir_->path());
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
  }
  static std::string so() { return dir_->file("model.so"); }
  static std::string params() { return dir_->file("model.params"); }
  // A copy of the params file with `edit` applied, for the corruption cases.
  static std::string edited_params(const std::string& stem,
                                   const std::function<void(std::vector<uint8_t>&)>& edit) {
    std::vector<uint8_t> bytes = read_file(params());
    edit(bytes);
    const std::string path = dir_->file(stem + ".params");
    write_file(path, bytes);
    return path;
  }
  static void check_outputs(Model& m, int threads_note) {
    const std::vector<float> x = test_input();
    std::vector<float> want_y, want_pre;
    reference_outputs(*model_, x, &want_y, &want_pre);
    std::vector<float> y(TestModel::kSize, -7), pre(TestModel::kSize, -7);
    m.run({x.data()}, {y.data(), pre.data()});
    for (int64_t i = 0; i < TestModel::kSize; ++i) {
      ASSERT_EQ(y[i], want_y[i]) << i << " with " << threads_note << " thread(s)";
      ASSERT_EQ(pre[i], want_pre[i]) << i;
    }
  }

  static TempDir* dir_;
  static TestModel* model_;
};
TempDir* ModelTest::dir_ = nullptr;
TestModel* ModelTest::model_ = nullptr;

TEST_F(ModelTest, RunsAndMatchesTheReference) {
  for (int threads : {1, 2, 3}) {
    Model m = Model::load(so(), params(), threads);
    EXPECT_EQ(m.num_threads(), threads);
    check_outputs(m, threads);
    check_outputs(m, threads);  // the workspace is reused
  }
}

TEST_F(ModelTest, DescribesItsInputsAndOutputs) {
  Model m = Model::load(so(), params(), 1);
  EXPECT_EQ(m.name(), "tiny");
  EXPECT_EQ(m.workspace_bytes(), 2 * TestModel::kSize * sizeof(float));
  EXPECT_EQ(m.params_bytes(), model_->params.size());
  ASSERT_EQ(m.inputs().size(), 1u);
  ASSERT_EQ(m.outputs().size(), 2u);
  EXPECT_EQ(m.inputs()[0].name, "x");
  EXPECT_EQ(m.inputs()[0].dtype, "f32");
  EXPECT_EQ(m.inputs()[0].shape, (std::vector<int64_t>{TestModel::kRows, TestModel::kCols}));
  EXPECT_EQ(m.inputs()[0].bytes, TestModel::kSize * sizeof(float));
  EXPECT_EQ(m.outputs()[1].name, "pre");
}

TEST_F(ModelTest, MovedModelKeepsWorking) {
  Model a = Model::load(so(), params(), 2);
  Model b = std::move(a);
  check_outputs(b, 2);
  Model c = Model::load(so(), params(), 1);
  c = std::move(b);
  check_outputs(c, 2);
}

TEST_F(ModelTest, RunAllocatesNothing) {
  Model m = Model::load(so(), params(), 2);
  const std::vector<float> x = test_input();
  std::vector<float> y(TestModel::kSize), pre(TestModel::kSize);
  m.run({x.data()}, {y.data(), pre.data()});  // warm: thread-locals, lazy binding
  start_counting_allocations();
  for (int r = 0; r < 20; ++r) m.run({x.data()}, {y.data(), pre.data()});
  EXPECT_EQ(stop_counting_allocations(), 0);
}

TEST_F(ModelTest, WrongArgumentsAreRefused) {
  Model m = Model::load(so(), params(), 1);
  std::vector<float> x(TestModel::kSize), y(TestModel::kSize);
  expect_error([&] { m.run({x.data()}, {y.data()}); }, ErrorCode::kInvalidArgument,
               {"1 input(s) and 2 output(s), got 1 and 1"});
  expect_error(
      [&] {
        m.run({x.data()}, {y.data(), nullptr});
      },
      ErrorCode::kInvalidArgument, {"output 1 ('pre') is null"});
  expect_error(
      [&] {
        m.run({nullptr}, {y.data(), y.data()});
      },
      ErrorCode::kInvalidArgument, {"input 0 ('x') is null"});
}

TEST_F(ModelTest, CApi) {
  kiln_model* m = nullptr;
  ASSERT_EQ(kiln_model_load(so().c_str(), params().c_str(), 2, &m), KILN_OK) << kiln_last_error();
  EXPECT_EQ(kiln_model_num_inputs(m), 1);
  EXPECT_EQ(kiln_model_num_outputs(m), 2);
  kiln_tensor_info info{};
  ASSERT_EQ(kiln_model_input_info(m, 0, &info), KILN_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_STREQ(info.dtype, "f32");
  ASSERT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], TestModel::kRows);
  EXPECT_EQ(info.shape[1], TestModel::kCols);
  EXPECT_EQ(info.bytes, TestModel::kSize * sizeof(float));
  ASSERT_EQ(kiln_model_output_info(m, 1, &info), KILN_OK);
  EXPECT_STREQ(info.name, "pre");
  EXPECT_EQ(kiln_model_output_info(m, 2, &info), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("out of range"), std::string::npos);

  const std::vector<float> x = test_input();
  std::vector<float> y(TestModel::kSize), pre(TestModel::kSize), want_y, want_pre;
  reference_outputs(*model_, x, &want_y, &want_pre);
  const void* inputs[] = {x.data()};
  void* outputs[] = {y.data(), pre.data()};
  ASSERT_EQ(kiln_model_run(m, inputs, outputs), KILN_OK) << kiln_last_error();
  EXPECT_EQ(y, want_y);
  EXPECT_EQ(pre, want_pre);
  void* one_null[] = {y.data(), nullptr};
  EXPECT_EQ(kiln_model_run(m, inputs, one_null), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_model_run(nullptr, inputs, outputs), KILN_ERROR_INVALID_ARGUMENT);
  kiln_model_free(m);

  kiln_model* bad = reinterpret_cast<kiln_model*>(0x1);
  EXPECT_EQ(kiln_model_load(so().c_str(), "/nonexistent/model.params", 1, &bad), KILN_ERROR_IO);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("/nonexistent/model.params"), std::string::npos);
  const std::string corrupt = edited_params("c_corrupt", [](auto& b) { b.back() ^= 1; });
  EXPECT_EQ(kiln_model_load(so().c_str(), corrupt.c_str(), 1, &bad), KILN_ERROR_PARAMS);
  EXPECT_EQ(kiln_model_load(nullptr, params().c_str(), 1, &bad), KILN_ERROR_INVALID_ARGUMENT);
}

TEST_F(ModelTest, LoadToFirstRunIsQuick) {
  // Reported, not asserted (timings are never asserted): a small model's load + first run.
  const auto t0 = std::chrono::steady_clock::now();
  Model m = Model::load(so(), params(), 1);
  const auto t1 = std::chrono::steady_clock::now();
  check_outputs(m, 1);
  const auto t2 = std::chrono::steady_clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("load %.3f ms, first run (with check) %.3f ms\n", ms(t1 - t0), ms(t2 - t1));
}

// ---- Damaged and foreign params

TEST_F(ModelTest, CorruptedParamsFailTheChecksum) {
  // A damaged weight: found before the first run reads it (params_first_use_test.cpp has the
  // order), or at once by verify_params.
  const std::string path =
      edited_params("flipped", [](auto& b) { b[kParamsHeaderBytes + 100] ^= 0x10; });
  Model m = Model::load(so(), path, 1);
  expect_error([&] { check_outputs(m, 1); }, ErrorCode::kParams,
               {path, "checksum mismatch in chunk 0", "corrupt"});
  expect_error([&] { Model::load(so(), path, 1).verify_params(); }, ErrorCode::kParams,
               {path, "checksum mismatch in chunk 0"});
  // A damaged chunk table (the file's last bytes): refused at load.
  const std::string table = edited_params("table", [](auto& b) { b.back() ^= 1; });
  expect_error([&] { Model::load(so(), table, 1); }, ErrorCode::kParams,
               {table, "checksum mismatch", "chunk table", "corrupt"});
}

TEST_F(ModelTest, TruncatedParams) {
  const std::string path = edited_params("truncated", [](auto& b) { b.resize(b.size() - 1); });
  expect_error([&] { Model::load(so(), path, 1); }, ErrorCode::kParams, {path, "truncated"});
  const std::string header_only = edited_params("half_header", [](auto& b) { b.resize(20); });
  expect_error([&] { Model::load(so(), header_only, 1); }, ErrorCode::kParams, {"truncated"});
  const std::string empty = edited_params("empty", [](auto& b) { b.clear(); });
  expect_error([&] { Model::load(so(), empty, 1); }, ErrorCode::kParams, {"truncated", "empty"});
  const std::string longer = edited_params("longer", [](auto& b) { b.push_back(0); });
  expect_error([&] { Model::load(so(), longer, 1); }, ErrorCode::kParams, {"size mismatch"});
}

TEST_F(ModelTest, UnknownParamsVersion) {
  const std::string path = edited_params("v5", [](auto& b) { b[8] = 5; });
  expect_error([&] { Model::load(so(), path, 1); }, ErrorCode::kParams,
               {"unknown format version 5", "reads version 4)"});
  // A file of the previous format (no chunk table): both versions named, and the way out.
  const std::string old = edited_params("v3", [](auto& b) { b[8] = 3; });
  expect_error([&] { Model::load(so(), old, 1); }, ErrorCode::kParams,
               {"unknown format version 3 (this runtime reads version 4; recompile the model"});
}

TEST_F(ModelTest, NotAParamsFile) {
  const std::string path = edited_params("magic", [](auto& b) { b[0] = 'X'; });
  expect_error([&] { Model::load(so(), path, 1); }, ErrorCode::kParams, {"not a kiln params file"});
  // The .so itself, given as params.
  expect_error([&] { Model::load(so(), so(), 1); }, ErrorCode::kParams, {"not a kiln params file"});
}

TEST_F(ModelTest, ReservedHeaderBytesMustBeZero) {
  const std::string path = edited_params("reserved", [](auto& b) { b[40] = 1; });
  expect_error([&] { Model::load(so(), path, 1); }, ErrorCode::kParams,
               {"reserved header byte 40"});
}

TEST_F(ModelTest, ParamsOfAnotherModelAreRefused) {
  // A valid params file, but the weights of a differently seeded model.
  const TestModel other = make_test_model("tiny", 2);
  ASSERT_NE(other.plan.params_checksum, model_->plan.params_checksum);
  const std::string path = dir_->file("other.params");
  write_params_file(path, other.params.data(), other.params.size());
  expect_error([&] { Model::load(so(), path, 1); }, ErrorCode::kParams,
               {"does not belong to model", so(), "checksum"});
}

TEST_F(ModelTest, MissingParamsFile) {
  expect_error([&] { Model::load(so(), dir_->file("absent.params"), 1); }, ErrorCode::kIo,
               {"absent.params", "No such file"});
}

// ---- Damaged or foreign .so files

TEST_F(ModelTest, TruncatedSo) {
  // Cut anywhere: in the ELF header, in the program headers, mid-segment, or by one byte.
  const std::vector<uint8_t> whole = read_file(so());
  for (size_t keep : {size_t{0}, size_t{10}, size_t{100}, whole.size() / 2, whole.size() - 1}) {
    const std::vector<uint8_t> bytes(whole.begin(), whole.begin() + keep);
    const std::string path = dir_->file("truncated" + std::to_string(keep) + ".so");
    write_file(path, bytes);
    expect_error([&] { Model::load(path, params(), 1); }, ErrorCode::kLoad, {path});
  }
  std::vector<uint8_t> bytes(whole.begin(), whole.begin() + whole.size() / 2);
  write_file(dir_->file("half.so"), bytes);
  expect_error([&] { Model::load(dir_->file("half.so"), params(), 1); }, ErrorCode::kLoad,
               {"is truncated or damaged", "the file has " + std::to_string(bytes.size())});
}

TEST_F(ModelTest, KernelModuleIsNotAModel) {
  const std::string path = dir_->file("kernels_only.so");
  codegen::build_shared_object(model_->kernels, target_from_name("host"), path);
  expect_error([&] { Model::load(path, params(), 1); }, ErrorCode::kLoad,
               {path, "is not a kiln model", "kiln_model_run"});
}

TEST_F(ModelTest, PlainFileIsNotAModel) {
  const std::string path = dir_->file("text.so");
  write_file(path, std::vector<uint8_t>(300, 'k'));
  expect_error([&] { Model::load(path, params(), 1); }, ErrorCode::kLoad, {path});
}

TEST_F(ModelTest, ModelForAnotherArchitecture) {
  const TempDir arm("kiln-model-arm");
  write_artifact(*model_, target_from_name("arm-neon"), arm.path());
  expect_error([&] { Model::load(arm.file("model.so"), arm.file("model.params"), 1); },
               ErrorCode::kLoad, {"built for aarch64", "this machine is x86_64"});
}

TEST_F(ModelTest, InfoRecordOfANewerFormat) {
  expect_error([&] { Model::load(KILN_FIXTURE_MODEL_NEWER, params(), 1); }, ErrorCode::kLoad,
               {KILN_FIXTURE_MODEL_NEWER, "malformed kiln_model_info",
                "format version 3, this runtime reads 2"});
}

TEST_F(ModelTest, InfoRecordWithoutItsTerminator) {
  expect_error([&] { Model::load(KILN_FIXTURE_MODEL_UNTERMINATED, params(), 1); }, ErrorCode::kLoad,
               {"malformed kiln_model_info", "not NUL-terminated"});
}

// ---- A kernel that fails at run time

TEST(ModelFailure, KernelStatusBecomesAnError) {
  // One kernel whose scratch buffer's size comes from the input: a huge size makes the
  // runtime's allocator fail and the kernel return a non-zero status; the copy after it must
  // not run.
  using ir::Buffer;
  using ir::DataType;
  Buffer n = ir::make_buffer("N", DataType::i64(), {1});
  Buffer out = ir::make_buffer("Out", DataType::f32(), {1});
  Buffer scratch = ir::make_buffer("scratch", DataType::f32(),
                                   {ir::make_load(n, {ir::make_int(DataType::i64(), 0)})});
  ir::Var i("i");
  ir::Stmt body = ir::make_allocate(
      scratch,
      ir::make_seq({ir::make_store(scratch, ir::make_float(DataType::f32(), 5),
                                   {ir::make_int(DataType::i64(), 0)}),
                    ir::make_store(out, ir::make_load(scratch, {ir::make_int(DataType::i64(), 0)}),
                                   {ir::make_int(DataType::i64(), 0)})}));
  ir::LoweredFunc grow{"grow", {n, out}, body};
  Buffer in1 = ir::make_buffer("In", DataType::f32(), {1}),
         out1 = ir::make_buffer("Out", DataType::f32(), {1});
  ir::LoweredFunc mark{
      "mark",
      {in1, out1},
      ir::make_store(out1, ir::make_float(DataType::f32(), 9), {ir::make_int(DataType::i64(), 0)})};
  codegen::ExecutorPlan plan;
  plan.name = "failing";
  plan.inputs = {{"n", DataType::i64(), {1}}};
  plan.outputs = {{"value", DataType::f32(), {1}}, {"marker", DataType::f32(), {1}}};
  plan.steps = {{"grow", {codegen::input_arg(0), codegen::output_arg(0)}},
                {"mark", {codegen::output_arg(0), codegen::output_arg(1)}}};
  plan.params_checksum = params_checksum(nullptr, 0);
  const TempDir dir("kiln-model-fail");
  codegen::build_model({grow, mark}, plan, target_from_name("host"), dir.file("model.so"));
  write_params_file(dir.file("model.params"), nullptr, 0);

  Model m = Model::load(dir.file("model.so"), dir.file("model.params"), 1);
  int64_t small = 4;
  float value = 0, marker = 0;
  m.run({&small}, {&value, &marker});
  EXPECT_EQ(value, 5.0f);
  EXPECT_EQ(marker, 9.0f);
  int64_t huge = int64_t{1} << 60;
  marker = 0;
  expect_error(
      [&] {
        m.run({&huge}, {&value, &marker});
      },
      ErrorCode::kKernel, {"model 'failing'", "status -1"});
  EXPECT_EQ(marker, 0.0f) << "a step after the failing one ran";
}

}  // namespace
}  // namespace kiln::testing
