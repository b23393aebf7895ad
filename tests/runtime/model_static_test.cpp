// kiln::Model::load_static and kiln_model_load_static on entry tables written by hand (the
// compiler's model.a is tested end to end in tests/network/static_link_test.cpp): a working
// entry runs, and every refusal names what is wrong before any model code runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "kiln/cpu_features.h"
#include "kiln/model.h"
#include "kiln/params.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"
#include "runtime/process/temp_dir.h"

namespace kiln::testing {
namespace {

// The model: y = x * params[0] for four floats.
const float kPayload[16] = {3.0f};
int g_init_calls = 0;

int32_t fake_init(const kiln_runtime_api* api) {
  ++g_init_calls;
  return api && api->abi_version == KILN_ABI_VERSION ? 0 : 1;
}
int32_t failing_init(const kiln_runtime_api*) {
  return 7;
}
int32_t fake_run(void* const* inputs, void* const* outputs, void*, const void* params) {
  const float scale = static_cast<const float*>(params)[0];
  for (int i = 0; i < 4; ++i)
    static_cast<float*>(outputs[0])[i] = static_cast<const float*>(inputs[0])[i] * scale;
  return 0;
}
kiln_model_step_hook_fn g_hook = nullptr;

std::string info_text() {
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(params_checksum(kPayload, sizeof kPayload)));
  return "kiln-model 2\nname scaler\nworkspace 0\nparams " + std::to_string(sizeof kPayload) + " " +
         checksum + "\ninput x f32 1 4\noutput y f32 1 4\n";
}

std::string target_text(const std::string& features, std::string arch = "") {
  if (arch.empty()) arch = std::string(cpu_arch());
  return "target=test;arch=" + arch + ";features=" + features;
}

class StaticModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_params_file(dir_.file("model.params"), kPayload, sizeof kPayload);
    entry_ = {KILN_ABI_VERSION, target_.c_str(), info_.c_str(), fake_init, fake_run, &g_hook};
  }
  // Expects load_static to throw RuntimeError with `code` and `fragment` in its message.
  void expect_refused(ErrorCode code, const std::string& fragment,
                      const std::string& params = "model.params") {
    try {
      Model::load_static(entry_, dir_.file(params), 1);
      ADD_FAILURE() << "no error";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
  TempDir dir_{"kiln-static-model"};
  std::string info_ = info_text();
  std::string target_ = target_text("");
  kiln_model_entry entry_{};
};

TEST_F(StaticModelTest, LoadsAndRuns) {
  const int before = g_init_calls;
  const Model m = Model::load_static(entry_, dir_.file("model.params"), 1);
  EXPECT_EQ(g_init_calls, before + 1);
  EXPECT_EQ(m.name(), "scaler");
  EXPECT_EQ(m.so_path(), "scaler (statically linked)");
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].bytes, 16u);
  const float x[4] = {1, 2, 3, 4};
  float y[4] = {};
  m.run({x}, {y});
  EXPECT_EQ(y[3], 12.0f);
}

TEST_F(StaticModelTest, CApi) {
  kiln_model* m = nullptr;
  ASSERT_EQ(kiln_model_load_static(&entry_, dir_.file("model.params").c_str(), 1, &m), KILN_OK)
      << kiln_last_error();
  const float x[4] = {1, 2, 3, 4};
  float y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  EXPECT_EQ(kiln_model_run(m, in, out), KILN_OK);
  EXPECT_EQ(y[1], 6.0f);
  kiln_model_free(m);
  EXPECT_EQ(kiln_model_load_static(nullptr, "model.params", 1, &m), KILN_ERROR_INVALID_ARGUMENT);
  write_params_file(dir_.file("other.params"), kPayload, 8);
  EXPECT_EQ(kiln_model_load_static(&entry_, dir_.file("other.params").c_str(), 1, &m),
            KILN_ERROR_PARAMS);
  EXPECT_NE(std::string(kiln_last_error()).find("does not belong to model 'scaler (statically"),
            std::string::npos)
      << kiln_last_error();
}

TEST_F(StaticModelTest, CorruptParamsAreRefused) {
  std::FILE* f = std::fopen(dir_.file("model.params").c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, kParamsHeaderBytes + 1, SEEK_SET);
  std::fputc(0x5a, f);
  std::fclose(f);
  // Loading maps the file and checks its header and chunk table; the bytes themselves are
  // checked before the first run reads them (params_first_use_test.cpp has the chunk-by-chunk
  // order).
  const Model m = Model::load_static(entry_, dir_.file("model.params"), 1);
  const float x[4] = {1, 2, 3, 4};
  float y[4] = {};
  try {
    m.run({x}, {y});
    ADD_FAILURE() << "ran on corrupt params";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParams);
    EXPECT_NE(std::string(e.what()).find("checksum mismatch in chunk 0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(y[0], 0.0f);  // the model never ran
  EXPECT_THROW(m.verify_params(), RuntimeError);
}

TEST_F(StaticModelTest, OtherAbiVersion) {
  entry_.abi_version = KILN_ABI_VERSION + 1;
  expect_refused(ErrorCode::kLoad, "built for kernel ABI " + std::to_string(KILN_ABI_VERSION + 1));
}

TEST_F(StaticModelTest, NullField) {
  entry_.run = nullptr;
  expect_refused(ErrorCode::kLoad, "has a null field");
}

TEST_F(StaticModelTest, MissingCpuFeatureRefusedBeforeInit) {
  target_ = target_text("kiln-no-such-feature");
  entry_.target = target_.c_str();
  entry_.init = failing_init;  // would fail the load differently if it ran
  expect_refused(ErrorCode::kLoad, "needs kiln-no-such-feature, this CPU lacks it");
}

TEST_F(StaticModelTest, OtherArchitecture) {
  target_ = target_text("", cpu_arch() == "aarch64" ? "x86_64" : "aarch64");
  entry_.target = target_.c_str();
  expect_refused(ErrorCode::kLoad, "this machine is " + std::string(cpu_arch()));
}

TEST_F(StaticModelTest, FailingInit) {
  entry_.init = failing_init;
  expect_refused(ErrorCode::kLoad, "failed with status 7");
}

}  // namespace
}  // namespace kiln::testing
