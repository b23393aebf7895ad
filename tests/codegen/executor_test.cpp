// The model executor (codegen/executor.h): the info record's text, every plan the validator
// must refuse (each naming the step), and the emitted kiln_model_run called straight through
// dlopen, with no kiln runtime (the runtime's side is tested in tests/runtime/model_test.cpp).
#include "compiler/codegen/executor.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "kiln/kernel_abi.h"
#include "kiln/params.h"
#include "test_model.h"

namespace kiln::codegen::testing {
namespace {

using kiln::testing::make_test_model;
using kiln::testing::TestModel;

// Expects validate_plan to throw a UserError containing every fragment.
void expect_refused(const kiln::testing::TestModel& m,
                    std::initializer_list<std::string> fragments) {
  try {
    validate_plan(m.kernels, m.plan);
    ADD_FAILURE() << "plan accepted";
  } catch (const UserError& e) {
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "'" << f << "' not in: " << e.what();
  }
}

TEST(ExecutorPlan, InfoText) {
  const TestModel m = make_test_model("tiny");
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(m.plan.params_checksum));
  EXPECT_EQ(model_info_text(m.plan),
            "kiln-model 2\n"
            "name tiny\n"
            "workspace 1024\n"
            "params 1024 " +
                std::string(checksum) +
                "\n"
                "verify 0 1\n"
                "input x f32 2 4 32\n"
                "output y f32 2 4 32\n"
                "output pre f32 2 4 32\n");
  ExecutorPlan scalar = m.plan;
  scalar.inputs = {{"s", ir::DataType::bf16(), {}}};
  EXPECT_NE(model_info_text(scalar).find("\ninput s bf16 0\n"), std::string::npos);
}

TEST(ExecutorPlan, ParamsCheckScheduleSaysWhichChunksEachStepNeedsFirst) {
  const uint64_t mib = uint64_t(1) << 20;
  ExecutorPlan plan;
  plan.params_bytes = 5 * mib + 10;
  auto step = [](std::vector<StepArg> args) { return ExecutorStep{"k", std::move(args)}; };
  plan.steps = {
      step({input_arg(0), workspace_arg(0)}),              // 0: no params
      step({params_arg(0), workspace_arg(0)}),             // 1: [0, 1.5 MiB) -> chunks [0, 2)
      step({params_arg(0), workspace_arg(64)}),            // 2: nothing new
      step({params_arg(3 * mib / 2), output_arg(0)}),      // 3: [1.5, 4) MiB -> [0, 4)
      step({params_arg(4 * mib), params_arg(3 * mib / 2)}),  // 4: [4 MiB, end) -> [0, 6)
  };
  const std::vector<ParamsCheckPoint> schedule = params_check_schedule(plan);
  ASSERT_EQ(schedule.size(), 3u);
  EXPECT_EQ(schedule[0].step, 1u);
  EXPECT_EQ(schedule[0].chunks, 2u);
  EXPECT_EQ(schedule[1].step, 3u);
  EXPECT_EQ(schedule[1].chunks, 4u);
  EXPECT_EQ(schedule[2].step, 4u);
  EXPECT_EQ(schedule[2].chunks, 6u);
  // A model without params has no points, and no "verify" line.
  plan.steps = {step({input_arg(0), output_arg(0)})};
  EXPECT_TRUE(params_check_schedule(plan).empty());
}

TEST(ExecutorPlan, TheTestModelIsValid) {
  const TestModel m = make_test_model();
  EXPECT_NO_THROW(validate_plan(m.kernels, m.plan));
}

TEST(ExecutorPlan, RefusesUnknownKernel) {
  TestModel m = make_test_model();
  m.plan.steps[1].kernel = "gelu";
  expect_refused(m, {"step 1 ('gelu')", "no kernel of that name", "add_bias, copy, relu, scale"});
}

TEST(ExecutorPlan, RefusesWrongArgumentCount) {
  TestModel m = make_test_model();
  m.plan.steps[2].args.pop_back();
  expect_refused(m, {"step 2 ('scale')", "2 arguments, but the kernel takes 3 buffers"});
}

TEST(ExecutorPlan, RefusesInputIndexOutOfRange) {
  TestModel m = make_test_model();
  m.plan.steps[0].args[0] = input_arg(1);
  expect_refused(
      m, {"step 0 ('add_bias'), argument 0 ('A', input)", "index 1 is out of range", "1 input(s)"});
}

TEST(ExecutorPlan, RefusesBytesPastTheWorkspace) {
  TestModel m = make_test_model();
  m.plan.steps[1].args[1] = workspace_arg(768);
  expect_refused(m, {"step 1 ('relu'), argument 1 ('Out', workspace)", "bytes [768, 1280)",
                     "run past the end of the workspace (1024 bytes)"});
}

TEST(ExecutorPlan, RefusesBytesPastTheParams) {
  TestModel m = make_test_model();
  m.plan.params_bytes = 600;
  expect_refused(m, {"step 2 ('scale'), argument 1", "past the end of the params (600 bytes)"});
}

TEST(ExecutorPlan, RefusesBytesPastAnOutput) {
  TestModel m = make_test_model();
  m.plan.outputs[1].shape = {2, 32};
  expect_refused(m, {"step 3 ('copy'), argument 1 ('Out', output)", "past the end of the output"});
}

TEST(ExecutorPlan, RefusesMisalignedOffset) {
  TestModel m = make_test_model();
  m.plan.steps[1].args[1] = workspace_arg(514);
  expect_refused(m, {"step 1 ('relu')", "offset 514 is not a multiple of the 4-byte element size"});
}

TEST(ExecutorPlan, RefusesOverlappingWrittenArguments) {
  TestModel m = make_test_model();
  m.plan.steps[1].args[1] = workspace_arg(256);  // relu's output over half of its input
  expect_refused(m, {"step 1 ('relu'): arguments 0 and 1 overlap in the workspace",
                     "[0, 512) and [256, 768)", "do not alias"});
}

TEST(ExecutorPlan, OverlappingReadOnlyArgumentsAreFine) {
  TestModel m = make_test_model();
  // add_bias reads A and B from the same bytes: no write, no aliasing hazard.
  m.plan.steps[0].args = {workspace_arg(512), workspace_arg(512), workspace_arg(0)};
  EXPECT_NO_THROW(validate_plan(m.kernels, m.plan));
}

TEST(ExecutorPlan, RefusesWritingTheParams) {
  TestModel m = make_test_model();
  m.plan.steps[3].args[1] = params_arg(0);
  expect_refused(m, {"step 3 ('copy'), argument 1 ('Out', params)", "params are read-only"});
}

TEST(ExecutorPlan, RefusesWritingAnInput) {
  TestModel m = make_test_model();
  m.plan.steps[3].args[1] = input_arg(0);
  expect_refused(m, {"step 3 ('copy'), argument 1", "model inputs belong to the caller"});
}

TEST(ExecutorPlan, RefusesBadNamesAndTypes) {
  TestModel m = make_test_model();
  m.plan.name = "my model";
  expect_refused(m, {"model name 'my model'", "free of spaces"});
  m = make_test_model();
  m.plan.outputs[1].name = "x";
  expect_refused(m, {"output name 'x' is used twice"});
  m = make_test_model();
  m.plan.inputs[0].dtype = ir::DataType::f32(4);
  expect_refused(m, {"input 'x' has dtype f32x4"});
  m = make_test_model();
  m.plan.inputs[0].shape = {-1, 32};
  expect_refused(m, {"input 'x' has a negative dimension -1"});
  m = make_test_model();
  m.plan.steps.clear();
  expect_refused(m, {"model 'tiny' has no steps"});
  m = make_test_model();
  m.plan.outputs.clear();
  expect_refused(m, {"model 'tiny' has no outputs"});
  m = make_test_model();
  m.kernels[3].name = "kiln_model_run";
  expect_refused(m, {"kernel name 'kiln_model_run' is reserved"});
}

TEST(ExecutorPlan, CompileModelValidatesFirst) {
  TestModel m = make_test_model();
  m.plan.steps[0].kernel = "nope";
  EXPECT_THROW(compile_model(m.kernels, m.plan, target_from_name("host")), UserError);
}

// dlopen()s a built model and calls its kiln_model_run directly, with no runtime.
class BuiltModel {
 public:
  explicit BuiltModel(const std::string& path) : module_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    run_ = reinterpret_cast<kiln_model_run_fn>(dlsym(handle_, KILN_MODEL_RUN_SYMBOL));
    info_ = static_cast<const char*>(dlsym(handle_, KILN_MODEL_INFO_SYMBOL));
    module_.init(nullptr);  // parallel loops run serially
  }
  ~BuiltModel() { dlclose(handle_); }
  kiln_model_run_fn run() const { return run_; }
  const char* info() const { return info_; }

 private:
  LoadedModule module_;
  void* handle_ = nullptr;
  kiln_model_run_fn run_ = nullptr;
  const char* info_ = nullptr;
};

TEST(CompileModel, ExportsTheExecutorAndRunsWithoutARuntime) {
  const TestModel m = make_test_model();
  const std::string path = temp_path("model") + ".so";
  build_model(m.kernels, m.plan, target_from_name("host"), path);
  const ElfSummary elf = read_elf(path);
  EXPECT_TRUE(elf.needed.empty());
  EXPECT_TRUE(elf.undefined.empty());
  for (const char* sym : {KILN_MODEL_RUN_SYMBOL, KILN_MODEL_INFO_SYMBOL, KILN_MODULE_INIT_SYMBOL,
                          KILN_MODULE_TARGET_SYMBOL})
    EXPECT_NE(std::find(elf.exported.begin(), elf.exported.end(), sym), elf.exported.end()) << sym;

  BuiltModel built(path);
  ASSERT_NE(built.run(), nullptr);
  ASSERT_NE(built.info(), nullptr);
  EXPECT_EQ(std::string(built.info()), model_info_text(m.plan));

  const std::vector<float> x = kiln::testing::test_input();
  std::vector<float> y(TestModel::kSize), pre(TestModel::kSize), want_y, want_pre;
  kiln::testing::reference_outputs(m, x, &want_y, &want_pre);
  // Both arenas 64-byte aligned, as kiln_model_run may assume.
  auto aligned_copy = [](std::vector<uint8_t>& storage, const std::vector<uint8_t>& bytes,
                         size_t size) {
    storage.assign(size + 64, 0);
    uint8_t* p = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    std::copy(bytes.begin(), bytes.end(), p);
    return p;
  };
  std::vector<uint8_t> workspace, params;
  void* ws = aligned_copy(workspace, {}, m.plan.workspace_bytes);
  const void* ps = aligned_copy(params, m.params, m.params.size());
  void* inputs[] = {const_cast<float*>(x.data())};
  void* outputs[] = {y.data(), pre.data()};
  ASSERT_EQ(built.run()(inputs, outputs, ws, ps), 0);
  EXPECT_EQ(y, want_y);
  EXPECT_EQ(pre, want_pre);
}

TEST(CompileModel, ReturnsTheFirstFailingStatusAndStops) {
  // A kernel that allocates a workspace with no runtime returns -1 (no kiln_module_init api);
  // the step after it must not run.
  ir::Buffer out = ir::make_buffer("Out", ir::DataType::f32(), {1});
  ir::Buffer scratch = ir::make_buffer("scratch", ir::DataType::f32(), {1000000});
  ir::Expr zero = ir::make_int(ir::DataType::i64(), 0);
  ir::LoweredFunc needs_api{
      "needs_api",
      {out},
      ir::make_allocate(scratch,
                        ir::make_store(scratch, ir::make_float(ir::DataType::f32(), 1), {zero}))};
  ir::Buffer marker = ir::make_buffer("Marker", ir::DataType::f32(), {1});
  ir::LoweredFunc mark{
      "mark", {marker}, ir::make_store(marker, ir::make_float(ir::DataType::f32(), 9), {zero})};
  ExecutorPlan plan;
  plan.name = "fails";
  plan.outputs = {{"out", ir::DataType::f32(), {1}}, {"marker", ir::DataType::f32(), {1}}};
  plan.steps = {
      {"mark", {output_arg(0)}}, {"needs_api", {output_arg(0)}}, {"mark", {output_arg(1)}}};
  const std::string path = temp_path("fails") + ".so";
  build_model({needs_api, mark}, plan, target_from_name("host"), path);
  BuiltModel built(path);
  float o = 0, mk = 0;
  void* outputs[] = {&o, &mk};
  EXPECT_EQ(built.run()(nullptr, outputs, nullptr, nullptr), -1);
  EXPECT_EQ(o, 9.0f) << "the first step ran";
  EXPECT_EQ(mk, 0.0f) << "the step after the failure ran";
}

TEST(CompileModel, CrossCompilesForAArch64) {
  const TestModel m = make_test_model();
  const std::string path = temp_path("arm_model") + ".so";
  CodegenOptions options;
  options.emit_assembly = true;
  const CompiledModule c =
      build_model(m.kernels, m.plan, target_from_name("arm-neon"), path, options);
  EXPECT_EQ(read_elf(path).machine, 183);  // EM_AARCH64
  EXPECT_NE(c.assembly.find("kiln_model_run:"), std::string::npos);
  EXPECT_NE(c.assembly.find("kiln_model_info:"), std::string::npos);
}

}  // namespace
}  // namespace kiln::codegen::testing
