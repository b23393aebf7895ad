// `kiln run DIR --farm HOST:PORT --key KEY` through the real CLI against a real tracker and
// worker on 127.0.0.1: a model directory (a hand-written fixture model, farm_fixture_model.c)
// runs in the worker's sandbox and its outputs come back as .npy; a key nobody serves, a
// damaged params file, a model that crashes or hangs and a job past the farm's message limit
// each end in one line saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kiln/params.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/run_program.h"
#include "tests/farm/farm_harness.h"

namespace kiln::farm {
namespace {

using testing::Farm;
using testing::read_binary;

// Runs this build's kiln with `args`.
ProgramRun kiln(const std::vector<std::string>& args, const TempDir& dir) {
  std::vector<std::string> argv = {KILN_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, dir.path());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// DIR/model/: the fixture model `so` with its checksum placeholder filled in, an empty
// params payload, and a model.json naming input x and output y (4 floats each); DIR/x.bin.
std::string write_model_dir(const TempDir& dir, const std::string& so) {
  const std::string model = dir.file("model");
  std::filesystem::create_directories(model);
  std::vector<uint8_t> bytes = read_binary(so);
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(params_checksum(nullptr, 0)));
  const std::string placeholder = "c0ffeec0ffeec0ff";
  auto at = std::search(bytes.begin(), bytes.end(), placeholder.begin(), placeholder.end());
  EXPECT_NE(at, bytes.end());
  std::memcpy(&*at, checksum, 16);
  write_bytes(model + "/model.so", bytes);
  write_params_file(model + "/model.params", nullptr, 0);
  std::ofstream(model + "/model.json")
      << R"({"inputs": [{"name": "x", "shape": [4], "dtype": "f32"}],
             "outputs": [{"name": "y", "shape": [4], "dtype": "f32"}], "layers": []})";
  const float x[4] = {1.5f, -2.0f, 0.25f, 8.0f};
  std::ofstream(dir.file("x.bin"), std::ios::binary).write(reinterpret_cast<const char*>(x), sizeof x);
  return model;
}

// `npy` is a float32 .npy of shape (4,) holding x + 1 (x as write_model_dir wrote it).
void expect_x_plus_one(const std::string& npy_path) {
  const std::vector<uint8_t> npy = read_binary(npy_path);
  ASSERT_GE(npy.size(), 16u + 10u);
  const std::string header(npy.begin(), npy.end() - 16);
  EXPECT_NE(header.find("'shape': (4,)"), std::string::npos) << header;
  float y[4];
  std::memcpy(y, npy.data() + npy.size() - 16, 16);
  EXPECT_EQ(y[0], 2.5f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[3], 9.0f);
}

class FarmModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    farm_ = new Farm();
    farm_->start_worker("host");
    farm_->wait_for_workers("host", 1);
  }
  static void TearDownTestSuite() {
    delete farm_;
    farm_ = nullptr;
  }
  // kiln run MODEL --input x=DIR/x.bin --farm ... plus `extra`.
  ProgramRun run_on_farm(const std::string& model, const std::vector<std::string>& extra,
                  const std::string& key = "host") {
    std::vector<std::string> args = {"run",   model,       "--input",      "x=" + dir_.file("x.bin"),
                                     "--farm", farm_->address(), "--key", key,
                                     "--token-file", farm_->token_file()};
    args.insert(args.end(), extra.begin(), extra.end());
    return kiln(args, dir_);
  }
  static Farm* farm_;
  TempDir dir_{"kiln-farm-model"};
};
Farm* FarmModel::farm_ = nullptr;

TEST_F(FarmModel, RunsOnAWorkerAndWritesTheOutputs) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_ADD_ONE);
  const ProgramRun r = run_on_farm(model, {"--runs", "3", "--output", dir_.file("out")});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("latency over 3 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on worker "), std::string::npos) << r.out;
  expect_x_plus_one(dir_.file("out/y.npy"));
}

TEST_F(FarmModel, KeyNobodyServes) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_ADD_ONE);
  const ProgramRun r = run_on_farm(model, {}, "nope");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no worker with key 'nope' is registered with the farm at " +
                       farm_->address() + " (keys there: 'host')"),
            std::string::npos)
      << r.out;
}

TEST_F(FarmModel, DamagedParamsAreRefusedByTheBoard) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_ADD_ONE);
  std::vector<uint8_t> params = read_binary(model + "/model.params");
  params[24] ^= 1;  // the header's checksum
  write_bytes(model + "/model.params", params);
  const ProgramRun r = run_on_farm(model, {});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("the board refused the model on worker"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checksum mismatch"), std::string::npos) << r.out;
}

TEST_F(FarmModel, CrashIsReported) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_CRASH);
  const ProgramRun r = run_on_farm(model, {});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("the model failed on worker"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed by signal"), std::string::npos) << r.out;
}

TEST_F(FarmModel, HangIsStoppedAtTheTimeout) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_HANG);
  const ProgramRun r = run_on_farm(model, {"--timeout", "1"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("the model ran past --timeout 1 s on worker"), std::string::npos) << r.out;
  // The worker goes on serving.
  const std::string ok = write_model_dir(dir_, KILN_FIXTURE_MODEL_ADD_ONE);
  EXPECT_EQ(run_on_farm(ok, {}).status, 0);
}

TEST_F(FarmModel, JobPastTheMessageLimit) {
  const std::string model = write_model_dir(dir_, KILN_FIXTURE_MODEL_ADD_ONE);
  const std::vector<uint8_t> big(260u << 20, 0);
  write_params_file(model + "/model.params", big.data(), big.size());
  const ProgramRun r = run_on_farm(model, {});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("more than the farm's 256 MiB message limit"), std::string::npos) << r.out;
}

// The same model cross-compiled for AArch64, run by the cross-built kiln-worker under qemu (its
// sandbox under qemu too): the board's architecture is not this machine's.
TEST(FarmModelArm, RunsOnAnAArch64WorkerUnderQemu) {
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty()) GTEST_SKIP() << "qemu-aarch64 is not on PATH";
  if (std::string(KILN_AARCH64_WORKER).empty() || !std::filesystem::exists(KILN_AARCH64_WORKER))
    GTEST_SKIP() << "no AArch64 kiln-worker (the cross build needs the arm64 gRPC packages)";
  if (std::string(KILN_AARCH64_FIXTURE_MODEL).empty()) GTEST_SKIP() << "no AArch64 cross compiler";
  Farm farm;
  std::vector<std::string> command = qemu;
  command.push_back(KILN_AARCH64_WORKER);
  std::string prefix;
  for (const std::string& word : qemu) prefix += (prefix.empty() ? "" : " ") + word;
  farm.start_worker_command(command, "arm", {"--sandbox-prefix", prefix});
  farm.wait_for_workers("arm", 1, 60);
  const TempDir dir("kiln-farm-model-arm");
  const std::string model = write_model_dir(dir, KILN_AARCH64_FIXTURE_MODEL);
  const ProgramRun r = kiln({"run", model, "--input", "x=" + dir.file("x.bin"), "--farm",
                             farm.address(), "--key", "arm", "--token-file", farm.token_file(),
                             "--runs", "2", "--output", dir.file("out")},
                            dir);
  ASSERT_EQ(r.status, 0) << r.out << farm.worker_log(0);
  EXPECT_NE(r.out.find("latency over 2 runs"), std::string::npos) << r.out;
  expect_x_plus_one(dir.file("out/y.npy"));
}

}  // namespace
}  // namespace kiln::farm
