// examples/model_app end to end: the test model compiled into an artifact in a temporary
// directory, run by the host build of model_app and by its AArch64 build under qemu-aarch64
// (skipped, with the reason, when the cross build or qemu is missing), outputs compared with
// the reference; and the refusals a user meets on a board (foreign params, a CPU without the
// model's features).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/params.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/run_program.h"
#include "runtime/process/temp_dir.h"
#include "tests/runtime/test_model.h"

namespace kiln::testing {
namespace {

using Result = ProgramRun;

std::string read_text(const std::string& path) {
  return read_file_bytes_or_empty(path);
}

Result run(const std::vector<std::string>& argv, const TempDir& dir) {
  return run_program(argv, dir.path());
}

void write_floats(const std::string& path, const std::vector<float>& v) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

// A version 1.0 .npy of float32 with `shape`, header padded to 64 bytes as NumPy does.
void write_npy(const std::string& path, const std::vector<float>& v, const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = read_text(path);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// The test model compiled for `target` into `dir`, with input.bin, input.npy and the expected
// first output.
std::vector<float> prepare(const TempDir& dir, const std::string& target) {
  const TestModel m = make_test_model();
  write_artifact(m, target_from_name(target), dir.path());
  const std::vector<float> x = test_input();
  write_floats(dir.file("input.bin"), x);
  write_npy(dir.file("input.npy"), x, "(4, 32)");
  std::vector<float> y, pre;
  reference_outputs(m, x, &y, &pre);
  return y;
}

// Checks a successful model_app run: the saved output and the printed top-5.
void expect_ran(const Result& r, const std::vector<float>& want, const std::string& saved) {
  ASSERT_EQ(r.status, 0) << r.out;
  std::printf("%s", r.out.c_str());  // the app's timings, for the log
  EXPECT_NE(r.out.find("model 'tiny': load"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median"), std::string::npos) << r.out;
  EXPECT_EQ(read_floats(saved), want);
  size_t best = 0;
  for (size_t i = 1; i < want.size(); ++i)
    if (want[i] > want[best]) best = i;
  const size_t top = r.out.find("top-5 of 'y':\n");
  ASSERT_NE(top, std::string::npos) << r.out;
  EXPECT_EQ(std::stoul(r.out.substr(top + 14)), best) << r.out;
}

TEST(ModelApp, HostRawAndNpyInputs) {
  const TempDir dir("kiln-model-app");
  const std::vector<float> want = prepare(dir, "host");
  for (const char* input : {"input.bin", "input.npy"}) {
    const Result r = run({KILN_MODEL_APP, dir.path(), dir.file(input), "--repeat", "3", "--threads",
                          "2", "--save", dir.file("out.bin")},
                         dir);
    expect_ran(r, want, dir.file("out.bin"));
  }
}

TEST(ModelApp, HostRefusals) {
  const TempDir dir("kiln-model-app");
  prepare(dir, "host");
  write_floats(dir.file("short.bin"), std::vector<float>(5, 1.0f));
  Result r = run({KILN_MODEL_APP, dir.path(), dir.file("short.bin")}, dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("holds 5 floats, input 'x' (4,32) needs 128"), std::string::npos) << r.out;

  // The same 128 floats in another shape are another input: refused, never run on their bytes.
  for (const char* shape : {"(32, 4)", "(128,)", "(1, 4, 32)"}) {
    write_npy(dir.file("shaped.npy"), test_input(), shape);
    r = run({KILN_MODEL_APP, dir.path(), dir.file("shaped.npy")}, dir);
    EXPECT_EQ(r.status, 2) << shape;
    EXPECT_NE(r.out.find("the model takes (4, 32)"), std::string::npos) << shape << ": " << r.out;
  }

  const TestModel other = make_test_model("tiny", 5);
  write_params_file(dir.file("model.params"), other.params.data(), other.params.size());
  r = run({KILN_MODEL_APP, dir.path(), dir.file("input.bin")}, dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("does not belong to model"), std::string::npos) << r.out;

  r = run({KILN_MODEL_APP, dir.path()}, dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("usage: model_app DIR INPUT"), std::string::npos) << r.out;
}

class ModelAppArm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(KILN_AARCH64_MODEL_APP).empty())
      GTEST_SKIP() << "no AArch64 model_app was built (aarch64-linux-gnu-g++ missing)";
    if (aarch64_qemu_prefix().empty()) GTEST_SKIP() << "qemu-aarch64 is not on PATH";
    ASSERT_EQ(access(KILN_AARCH64_MODEL_APP, X_OK), 0) << "missing " << KILN_AARCH64_MODEL_APP;
  }
  // qemu-aarch64 -cpu CPU -L SYSROOT model_app ARGS...
  static std::vector<std::string> under_qemu(const std::string& cpu,
                                             std::vector<std::string> args) {
    std::vector<std::string> argv = aarch64_qemu_prefix();
    argv[2] = cpu;
    argv.push_back(KILN_AARCH64_MODEL_APP);
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
};

TEST_F(ModelAppArm, RunsUnderQemu) {
  const TempDir dir("kiln-model-app-arm");
  const std::vector<float> want = prepare(dir, "arm-neon");
  const Result r = run(under_qemu("max", {dir.path(), dir.file("input.npy"), "--repeat", "2",
                                          "--threads", "2", "--save", dir.file("out.bin")}),
                       dir);
  expect_ran(r, want, dir.file("out.bin"));
}

TEST_F(ModelAppArm, RefusesACpuWithoutTheModelsFeatures) {
  const TempDir dir("kiln-model-app-arm");
  prepare(dir, "arm-bf16");
  const Result r = run(under_qemu("neoverse-n1", {dir.path(), dir.file("input.bin")}), dir);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("(target arm-bf16) needs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bf16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("this CPU lacks"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln::testing
