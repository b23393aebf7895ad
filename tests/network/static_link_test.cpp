// model.a + model.h end to end: small ONNX networks compiled by the network compiler, a C
// program (static_model_app.c) compiled against their model.h and linked with their model.a
// and the runtime's static library, run as its own process; its outputs must equal what the
// same model's model.so computes. The AArch64 case cross-links the program and runs it under
// qemu (skipped, with the reason, without the cross compiler, the cross-built runtime or qemu).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "network/compile_network.h"
#include "kiln/compare.h"
#include "kiln/model.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/run_program.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using Result = ProgramRun;

std::string read_file(const std::string& path) {
  return read_file_bytes_or_empty(path);
}

Result run(const std::vector<std::string>& argv, const TempDir& dir) {
  return run_program(argv, dir.path());
}

// `bytes` (an ONNX model) compiled for `target` into DIR/STEM/ with `shapes` bound; the model
// is named STEM.
std::string compile_into(const TempDir& dir, const std::string& stem, const std::string& bytes,
                         const std::string& target, const graph::ShapeBindings& shapes = {}) {
  const std::string onnx = dir.file(stem + ".onnx");
  std::ofstream(onnx, std::ios::binary) << bytes;
  compile_network({onnx, target_from_name(target), {}, shapes, dir.file(stem)});
  return dir.file(stem);
}

// Deterministic inputs for every input of the model in `model_dir`, back to back, written to
// `path`; the model's input sizes come from `so_model`.
std::vector<uint8_t> write_inputs(const Model& so_model, const std::string& path) {
  std::vector<uint8_t> bytes;
  uint32_t state = 12345;
  for (const TensorInfo& t : so_model.inputs()) {
    for (uint64_t i = 0; i < t.bytes / 4; ++i) {
      state = state * 1664525u + 1013904223u;
      const float v = static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;
      const auto* p = reinterpret_cast<const uint8_t*>(&v);
      bytes.insert(bytes.end(), p, p + 4);
    }
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

// The outputs (back to back) of the model.so in `model_dir` for `inputs` (back to back).
std::string run_shared(const Model& m, const std::vector<uint8_t>& inputs) {
  std::vector<const void*> in;
  uint64_t at = 0;
  for (const TensorInfo& t : m.inputs()) {
    in.push_back(inputs.data() + at);
    at += t.bytes;
  }
  std::vector<std::vector<float>> out;
  std::vector<void*> op;
  for (const TensorInfo& t : m.outputs()) out.emplace_back(t.bytes / 4);
  for (auto& o : out) op.push_back(o.data());
  m.run(std::span<const void* const>(in), std::span<void* const>(op));
  std::string bytes;
  for (const auto& o : out) bytes.append(reinterpret_cast<const char*>(o.data()), o.size() * 4);
  return bytes;
}

// conv_bn_relu_pool_gemm_softmax has a symbolic batch.
const graph::ShapeBindings kBatchOne = {{"batch", {1}}};

struct Toolchain {
  std::string cc, cxx, runtime_lib;
  std::vector<std::string> link_flags;
};

Toolchain host_toolchain() {
  return {KILN_HOST_CC, KILN_HOST_CXX, KILN_RT_STATIC_LIB, {}};
}

// static_model_app linked with the model.a of every directory in `models` (entries: their
// kiln_model_<NAME> tables, in the same order). Returns the program's path.
std::string build_app(const TempDir& dir, const Toolchain& tc, const std::vector<std::string>& models,
                      const std::vector<std::string>& entries) {
  std::string list;
  for (const std::string& e : entries) list += (list.empty() ? "&" : ",&") + e;
  std::vector<std::string> compile = {tc.cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
                                      "-I" KILN_RUNTIME_INCLUDE, "-DKILN_MODEL_ENTRIES=" + list};
  for (const std::string& m : models) {
    compile.push_back("-include");
    compile.push_back(m + "/model.h");
  }
  for (const std::string& a : {std::string("-c"), std::string(KILN_STATIC_MODEL_APP_SOURCE),
                               std::string("-o"), dir.file("app.o")})
    compile.push_back(a);
  Result r = run(compile, dir);
  EXPECT_EQ(r.status, 0) << r.out;
  std::vector<std::string> link = {tc.cxx, dir.file("app.o")};
  for (const std::string& m : models) link.push_back(m + "/model.a");
  for (const std::string& a : {tc.runtime_lib, std::string("-lpthread"), std::string("-ldl"),
                               std::string("-o"), dir.file("app")})
    link.push_back(a);
  link.insert(link.end(), tc.link_flags.begin(), tc.link_flags.end());
  r = run(link, dir);
  EXPECT_EQ(r.status, 0) << r.out;
  return dir.file("app");
}

TEST(StaticLink, HeaderDescribesTheModel) {
  const TempDir dir("kiln-static-link");
  const std::string m = compile_into(dir, "net", conv_bn_relu_pool_gemm_softmax(), "host", kBatchOne);
  const std::string h = read_file(m + "/model.h");
  EXPECT_NE(h.find("extern const kiln_model_entry kiln_model_net;"), std::string::npos) << h;
  EXPECT_NE(h.find("kiln_model_load_static(&kiln_model_net, \"model.params\""), std::string::npos);
  EXPECT_NE(h.find("#define KILN_MODEL_NET_NUM_INPUTS 1\n"), std::string::npos) << h;
  EXPECT_NE(h.find("#define KILN_MODEL_NET_INPUT_0_DTYPE \"f32\"\n"), std::string::npos) << h;
  const Model so = Model::load(m + "/model.so", m + "/model.params", 1);
  std::string shape;
  for (int64_t d : so.inputs()[0].shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  EXPECT_NE(h.find("#define KILN_MODEL_NET_INPUT_0_SHAPE { " + shape + " }\n"), std::string::npos)
      << h;
  EXPECT_NE(h.find("#define KILN_MODEL_NET_PARAMS_BYTES " + std::to_string(so.params_bytes())),
            std::string::npos)
      << h;
  // An ar archive with a symbol index (the "/" member) that names the entry table.
  const std::string a = read_file(m + "/model.a");
  ASSERT_EQ(a.compare(0, 8, "!<arch>\n"), 0);
  EXPECT_EQ(a.compare(8, 2, "/ "), 0);
  EXPECT_NE(a.find("kiln_model_net"), std::string::npos);
}

TEST(StaticLink, NameOptionNamesTheEntryTable) {
  const TempDir dir("kiln-static-link");
  std::ofstream(dir.file("model.onnx"), std::ios::binary) << residual_block();
  CompileOptions o{dir.file("model.onnx"), target_from_name("host"), {}, {}, dir.file("out")};
  o.name = "resnet-18.v1";
  compile_network(o);
  const std::string h = read_file(dir.file("out/model.h"));
  EXPECT_NE(h.find("extern const kiln_model_entry kiln_model_resnet_18_v1;"), std::string::npos)
      << h;
  EXPECT_NE(h.find("#define KILN_MODEL_RESNET_18_V1_NAME \"resnet-18.v1\""), std::string::npos)
      << h;
}

TEST(StaticLink, HostProgramMatchesSharedObject) {
  const TempDir dir("kiln-static-link");
  const std::string m = compile_into(dir, "net", conv_bn_relu_pool_gemm_softmax(), "host", kBatchOne);
  const Model so = Model::load(m + "/model.so", m + "/model.params", 1);
  const std::vector<uint8_t> in = write_inputs(so, dir.file("in.bin"));
  const std::string app = build_app(dir, host_toolchain(), {m}, {"kiln_model_net"});
  const Result r = run({app, m + "/model.params", dir.file("in.bin"), dir.file("out.bin")}, dir);
  ASSERT_EQ(r.status, 0) << r.out;
  // The same optimised code as model.so, one thread each: the very same bits.
  EXPECT_EQ(read_file(dir.file("out.bin")), run_shared(so, in));
}

TEST(StaticLink, TwoModelsLinkIntoOneProgram) {
  const TempDir dir("kiln-static-link");
  const std::string a = compile_into(dir, "net", conv_bn_relu_pool_gemm_softmax(), "host", kBatchOne);
  const std::string b = compile_into(dir, "block", residual_block(), "host");
  const Model so_a = Model::load(a + "/model.so", a + "/model.params", 1);
  const Model so_b = Model::load(b + "/model.so", b + "/model.params", 1);
  const std::vector<uint8_t> in_a = write_inputs(so_a, dir.file("a.bin"));
  const std::vector<uint8_t> in_b = write_inputs(so_b, dir.file("b.bin"));
  const std::string app =
      build_app(dir, host_toolchain(), {a, b}, {"kiln_model_net", "kiln_model_block"});
  const Result r = run({app, a + "/model.params", dir.file("a.bin"), dir.file("a.out"),
                        b + "/model.params", dir.file("b.bin"), dir.file("b.out")},
                       dir);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(dir.file("a.out")), run_shared(so_a, in_a));
  EXPECT_EQ(read_file(dir.file("b.out")), run_shared(so_b, in_b));
}

TEST(StaticLink, RefusesCorruptAndForeignParams) {
  const TempDir dir("kiln-static-link");
  const std::string a = compile_into(dir, "net", conv_bn_relu_pool_gemm_softmax(), "host", kBatchOne);
  const std::string b = compile_into(dir, "block", residual_block(), "host");
  const Model so = Model::load(a + "/model.so", a + "/model.params", 1);
  write_inputs(so, dir.file("in.bin"));
  const std::string app = build_app(dir, host_toolchain(), {a}, {"kiln_model_net"});

  Result r = run({app, b + "/model.params", dir.file("in.bin"), dir.file("out.bin")}, dir);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("does not belong to model 'net (statically linked)'"), std::string::npos)
      << r.out;

  std::string params = read_file(a + "/model.params");
  params[params.size() / 2] ^= 0x10;
  std::ofstream(dir.file("bad.params"), std::ios::binary) << params;
  r = run({app, dir.file("bad.params"), dir.file("in.bin"), dir.file("out.bin")}, dir);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("checksum mismatch"), std::string::npos) << r.out;
}

TEST(StaticLinkArm, QemuProgramMatchesHost) {
  const std::string cross_rt = KILN_AARCH64_RT_STATIC_LIB;
  if (std::string(KILN_AARCH64_CC).empty()) GTEST_SKIP() << "no aarch64-linux-gnu-gcc";
  if (access(cross_rt.c_str(), R_OK) != 0) GTEST_SKIP() << "no cross-built runtime " << cross_rt;
  if (aarch64_qemu_prefix().empty()) GTEST_SKIP() << "qemu-aarch64 is not on PATH";
  const TempDir dir("kiln-static-link");
  const std::string host = compile_into(dir, "host", residual_block(), "host");
  const std::string arm = compile_into(dir, "net", residual_block(), "arm-neon");
  const Model so = Model::load(host + "/model.so", host + "/model.params", 1);
  const std::vector<uint8_t> in = write_inputs(so, dir.file("in.bin"));
  // The cross toolchain's libstdc++ is not in the multiarch sysroot qemu may use: carry it.
  const Toolchain arm_tc{KILN_AARCH64_CC, KILN_AARCH64_CXX, cross_rt,
                         {"-static-libstdc++", "-static-libgcc"}};
  const std::string app = build_app(dir, arm_tc, {arm}, {"kiln_model_net"});
  std::vector<std::string> argv = aarch64_qemu_prefix();
  for (const std::string& a :
       {app, arm + "/model.params", dir.file("in.bin"), dir.file("out.bin")})
    argv.push_back(a);
  const Result r = run(argv, dir);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("target=arm-neon"), std::string::npos) << r.out;
  const std::string got = read_file(dir.file("out.bin"));
  const std::string want = run_shared(so, in);
  ASSERT_EQ(got.size(), want.size());
  const auto* g = reinterpret_cast<const float*>(got.data());
  const auto* w = reinterpret_cast<const float*>(want.data());
  const Closeness c = judge_closeness(
      want.size() / 4, [&](size_t i) { return double(g[i]); }, [&](size_t i) { return double(w[i]); },
      1e-4);
  EXPECT_TRUE(c.close) << c.mismatches << " mismatches, first at " << c.first;
}

}  // namespace
}  // namespace kiln::network::test
