// The params checked chunk by chunk during a model's first run (runtime/src/params_first_use.h),
// on a hand-written statically linked model of three steps, step s reading params chunk s and
// calling the step hook after it as kiln_model_run does. What must hold: loading reads no
// payload; no step ever reads a chunk that has not matched its table entry; a corrupt chunk
// stops the run before the step that needs it, naming the chunk; and without the points (or
// with a profiler's hook in the slot) everything is checked before the first step.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kiln/cpu_features.h"
#include "kiln/model.h"
#include "kiln/params.h"
#include "kiln/runtime.h"
#include "runtime/process/temp_dir.h"

namespace kiln::testing {
namespace {

constexpr size_t kChunk = kParamsChecksumChunkBytes;
constexpr size_t kPayloadBytes = 2 * kChunk + 100;  // three chunks, the last one short

kiln_model_step_hook_fn g_hook = nullptr;
std::vector<int> g_steps_ran;
int g_profiler_calls = 0;

int32_t init(const kiln_runtime_api*) {
  return 0;
}

// Three steps; step s adds the first byte of params chunk s to the output.
int32_t run(void* const* inputs, void* const* outputs, void*, const void* params) {
  float* y = static_cast<float*>(outputs[0]);
  y[0] = *static_cast<const float*>(inputs[0]);
  for (int s = 0; s < 3; ++s) {
    g_steps_ran.push_back(s);
    y[0] += static_cast<const uint8_t*>(params)[s * kChunk];
    const kiln_model_step_hook_fn hook = *static_cast<volatile kiln_model_step_hook_fn*>(&g_hook);
    if (hook) {
      if (const int32_t status = hook(s)) return status;
    }
  }
  return 0;
}

int32_t profiler(int32_t) {
  ++g_profiler_calls;
  return 0;
}

class ParamsFirstUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<uint8_t> payload(kPayloadBytes);
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i % 7 + 1);
    write_params_file(dir_.file("model.params"), payload.data(), payload.size());
    char checksum[17];
    std::snprintf(checksum, sizeof checksum, "%016llx",
                  static_cast<unsigned long long>(params_checksum(payload.data(), kPayloadBytes)));
    info_ = "kiln-model 2\nname three\nworkspace 0\nparams " + std::to_string(kPayloadBytes) + " " +
            checksum + "\n" + verify_line_ + "input x f32 1 1\noutput y f32 1 1\n";
    g_hook = nullptr;
    g_steps_ran.clear();
    g_profiler_calls = 0;
  }

  Model load() {
    entry_ = {KILN_ABI_VERSION, target_.c_str(), info_.c_str(), init, run, &g_hook};
    return Model::load_static(entry_, dir_.file("model.params"), threads_);
  }

  // Flips a bit in payload byte `at`.
  void corrupt(size_t at) {
    std::FILE* f = std::fopen(dir_.file("model.params").c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(kParamsHeaderBytes + at), SEEK_SET);
    const int byte = std::fgetc(f);
    std::fseek(f, static_cast<long>(kParamsHeaderBytes + at), SEEK_SET);
    std::fputc(byte ^ 0x10, f);
    std::fclose(f);
  }

  // Runs once, expecting RuntimeError kParams naming `chunk`.
  void expect_corrupt_chunk(const Model& m, int chunk) {
    const float x = 1;
    float y = 0;
    try {
      m.run({&x}, {&y});
      ADD_FAILURE() << "ran";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParams) << e.what();
      EXPECT_NE(std::string(e.what()).find("checksum mismatch in chunk " + std::to_string(chunk)),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("model.params"), std::string::npos) << e.what();
    }
  }

  TempDir dir_{"kiln-first-use"};
  std::string verify_line_ = "verify 0 1 1 2 2 3\n";  // step s needs chunks [0, s + 1)
  std::string info_;
  std::string target_ = "target=test;arch=" + std::string(cpu_arch()) + ";features=";
  kiln_model_entry entry_{};
  int threads_ = 1;
};

TEST_F(ParamsFirstUseTest, AnIntactModelRunsAndLaterRunsCheckNothing) {
  const Model m = load();
  const float x = 1;
  float y = 0;
  m.run({&x}, {&y});
  EXPECT_EQ(y, 1.0f + 1 + (kChunk % 7 + 1) + (2 * kChunk % 7 + 1));
  EXPECT_EQ(g_steps_ran, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g_hook, nullptr);  // installed for the first run only: later runs pay nothing
  m.run({&x}, {&y});
  EXPECT_EQ(g_hook, nullptr);
  EXPECT_NO_THROW(m.verify_params());
}

TEST_F(ParamsFirstUseTest, ACorruptChunkStopsTheRunBeforeTheStepThatReadsIt) {
  corrupt(kChunk + 5);     // chunk 1, which step 1 reads
  const Model m = load();  // loading reads no payload: it succeeds
  expect_corrupt_chunk(m, 1);
  EXPECT_EQ(g_steps_ran, (std::vector<int>{0}));
  g_steps_ran.clear();
  expect_corrupt_chunk(m, 1);  // and every later run fails the same way
  EXPECT_EQ(g_steps_ran, (std::vector<int>{}));
  EXPECT_THROW(m.verify_params(), RuntimeError);
}

TEST_F(ParamsFirstUseTest, OnAPoolOfTwoThreadsToo) {
  threads_ = 2;
  corrupt(2 * kChunk + 99);  // the last byte of the short last chunk
  const Model m = load();
  expect_corrupt_chunk(m, 2);
  EXPECT_EQ(g_steps_ran, (std::vector<int>{0, 1}));
}

TEST_F(ParamsFirstUseTest, VerifyParamsChecksEverythingUpFront) {
  corrupt(2 * kChunk);
  const Model m = load();
  try {
    m.verify_params();
    ADD_FAILURE() << "verified";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 2"), std::string::npos) << e.what();
  }
  expect_corrupt_chunk(m, 2);
  EXPECT_EQ(g_steps_ran, (std::vector<int>{}));  // known bad before step 0: nothing ran
}

TEST_F(ParamsFirstUseTest, WithoutPointsEverythingIsCheckedBeforeTheFirstStep) {
  verify_line_ = "";
  SetUp();
  corrupt(2 * kChunk + 1);
  const Model m = load();
  expect_corrupt_chunk(m, 2);
  EXPECT_EQ(g_steps_ran, (std::vector<int>{}));
}

TEST_F(ParamsFirstUseTest, MalformedPointsCheckEverythingWhenMet) {
  const struct {
    const char* line;
    std::vector<int> ran;
  } cases[] = {
      // The reader looks one point ahead for step 0's needs: the bad second point is met there.
      {"verify 0 1 1 x\n", {}},
      // Met after step 0, while reading what step 1 needs.
      {"verify 0 1 1 2 2\n", {0}},
  };
  for (const auto& c : cases) {
    verify_line_ = c.line;
    SetUp();
    corrupt(2 * kChunk + 1);
    const Model m = load();
    expect_corrupt_chunk(m, 2);
    EXPECT_EQ(g_steps_ran, c.ran) << c.line;
  }
}

TEST_F(ParamsFirstUseTest, AProfilersHookInTheSlotMeansEverythingIsCheckedFirst) {
  corrupt(kChunk);
  const Model m = load();
  g_hook = profiler;
  expect_corrupt_chunk(m, 1);
  EXPECT_EQ(g_steps_ran, (std::vector<int>{}));
  EXPECT_EQ(g_hook, &profiler);  // left as the profiler set it
  EXPECT_EQ(g_profiler_calls, 0);
}

TEST_F(ParamsFirstUseTest, ACorruptChunkTableIsRefusedAtLoad) {
  std::FILE* f = std::fopen(dir_.file("model.params").c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, static_cast<long>(kParamsHeaderBytes + kPayloadBytes + 8), SEEK_SET);
  std::fputc(0x77, f);
  std::fclose(f);
  try {
    load();
    ADD_FAILURE() << "loaded";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParams);
    EXPECT_NE(std::string(e.what()).find("chunk table does not combine to the header"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
