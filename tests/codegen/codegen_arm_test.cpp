// AArch64 kernels executed under qemu-aarch64 (-cpu max: fp16, bf16...) through a tiny
// cross-compiled loader (aarch64_runner.c). Skipped when qemu or the cross compiler is
// missing. Each buffer goes through files: the runner has no runtime, so kernels run with
// kiln_module_init(NULL) (parallel loops inline on the calling thread).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/ir/op.h"
#include "runtime/process/kernel_exec.h"

#ifndef KILN_ARM_RUNNER
#define KILN_ARM_RUNNER ""
#endif
#ifndef KILN_QEMU_AARCH64
#define KILN_QEMU_AARCH64 ""
#endif

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;
using ir::Var;

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <typename T>
std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

class ArmRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(KILN_ARM_RUNNER).empty() || !std::filesystem::exists(KILN_ARM_RUNNER) ||
        std::string(KILN_QEMU_AARCH64).empty())
      GTEST_SKIP() << "no qemu-aarch64 or no AArch64 cross compiler";
  }
  // Builds `f` for `target`, runs it under qemu on `bufs` (all padded to one size), and
  // returns the buffers afterwards.
  std::vector<std::vector<uint8_t>> run(const LoweredFunc& f, const std::string& target,
                                        std::vector<std::vector<uint8_t>> bufs) {
    std::string so = build({f}, target_from_name(target));
    size_t bytes = 0;
    for (const auto& b : bufs) bytes = std::max(bytes, b.size());
    std::string in = temp_path("arm_in"), out = temp_path("arm_out");
    {
      std::ofstream os(in, std::ios::binary);
      for (auto b : bufs) {
        b.resize(bytes);
        os.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(bytes));
      }
    }
    // The one rule for running AArch64 programs here (runtime/process/kernel_exec.h): with Debian's
    // multiarch arm64 libc installed the cross toolchain's sysroot hangs at start-up under
    // qemu, so the prefix names the multiarch one then (see TOOLCHAIN.md).
    std::string qemu;
    for (const std::string& word : aarch64_qemu_prefix()) qemu += word + " ";
    std::string cmd = "timeout 120 " + qemu + KILN_ARM_RUNNER + " " + so + " " + f.name + " " +
                      std::to_string(bufs.size()) + " " + std::to_string(bytes) + " " + in + " " +
                      out;
    int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << cmd;
    std::ifstream is(out, std::ios::binary);
    for (auto& b : bufs) {
      size_t keep = b.size();
      b.resize(bytes);
      is.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(bytes));
      b.resize(keep);
    }
    return bufs;
  }
};

LoweredFunc fma_kernel(DataType t, int lanes, int64_t n) {
  Buffer a = ir::make_buffer("A", t, {n}), b = ir::make_buffer("B", t, {n});
  Buffer c = ir::make_buffer("C", t, {n});
  Var i("i");
  Expr r = ir::make_ramp(i * lanes, 1, lanes);
  auto ld = [&](const Buffer& buf) { return ir::make_load(buf, {r}); };
  return {"fma",
          {a, b, c},
          ir::make_for(i, 0, n / lanes, ir::ForKind::Parallel,
                       ir::make_store(c, ld(a) * ld(b) + ld(c), {r}))};
}

TEST_F(ArmRun, F32FmaOnNeon) {
  const int64_t n = 256;
  std::vector<float> a(n), b(n), c(n);
  for (int k = 0; k < n; ++k) a[k] = k * 0.25f - 7, b[k] = 1.5f - k * 0.125f, c[k] = k * 0.5f;
  auto out =
      run(fma_kernel(DataType::f32(), 4, n), "arm-neon", {bytes_of(a), bytes_of(b), bytes_of(c)});
  auto got = values_of<float>(out[2]);
  for (int k = 0; k < n; ++k) ASSERT_EQ(got[k], std::fma(a[k], b[k], c[k])) << k;
}

TEST_F(ArmRun, F16FmaNativeAndWidened) {
  const int64_t n = 256;
  std::vector<uint16_t> a(n), b(n), c(n);
  for (int k = 0; k < n; ++k) {
    a[k] = f32_to_f16_ref(k * 0.125f - 3), b[k] = f32_to_f16_ref(0.75f - k * 0.01f);
    c[k] = f32_to_f16_ref(k * 0.3f);
  }
  for (const char* target : {"arm-fp16", "arm-neon"}) {
    auto out =
        run(fma_kernel(DataType::f16(), 8, n), target, {bytes_of(a), bytes_of(b), bytes_of(c)});
    auto got = values_of<uint16_t>(out[2]);
    for (int k = 0; k < n; ++k) {
      float want = f16_to_f32_ref(a[k]) * f16_to_f32_ref(b[k]) + f16_to_f32_ref(c[k]);
      ASSERT_NEAR(f16_to_f32_ref(got[k]), want, 2e-3f * (1 + std::fabs(want)))
          << target << " " << k;
    }
  }
}

TEST_F(ArmRun, HalfConversionsRoundToNearestEven) {
  const int64_t n = 64;
  std::vector<float> a(n);
  uint32_t x = 99;
  for (int k = 0; k < n; ++k) {
    x = x * 1664525u + 1013904223u;
    a[k] = std::bit_cast<float>(k < 8 ? (0x3f800000u | (k << 12) | 0x8000u) : x);  // ties first
  }
  a[8] = std::bit_cast<float>(0x00018000u);  // subnormal
  a[9] = std::bit_cast<float>(0x7f800001u);  // signalling NaN
  Buffer fa = ir::make_buffer("A", DataType::f32(), {n});
  Buffer hb = ir::make_buffer("HB", DataType::bf16(), {n});
  Buffer hf = ir::make_buffer("HF", DataType::f16(), {n});
  Var i("i");
  Expr r = ir::make_ramp(i * 8, 1, 8);
  ir::Stmt body = ir::make_seq(
      {ir::make_store(hb, ir::make_cast(DataType::bf16(8), ir::make_load(fa, {r})), {r}),
       ir::make_store(hf, ir::make_cast(DataType::f16(8), ir::make_load(fa, {r})), {r})});
  LoweredFunc f{"cvt", {fa, hb, hf}, ir::make_for(i, 0, n / 8, ir::ForKind::Serial, body)};
  for (const char* target : {"arm-neon", "arm-bf16"}) {
    auto out =
        run(f, target, {bytes_of(a), std::vector<uint8_t>(2 * n), std::vector<uint8_t>(2 * n)});
    auto bf = values_of<uint16_t>(out[1]);
    auto h = values_of<uint16_t>(out[2]);
    for (int k = 0; k < n; ++k) {
      if (std::isnan(a[k])) {
        EXPECT_TRUE((bf[k] & 0x7f80) == 0x7f80 && (bf[k] & 0x7f)) << target;
        EXPECT_TRUE((h[k] & 0x7c00) == 0x7c00 && (h[k] & 0x3ff)) << target;
        continue;
      }
      EXPECT_EQ(bf[k], f32_to_bf16_ref(a[k]))
          << target << " 0x" << std::hex << std::bit_cast<uint32_t>(a[k]);
      EXPECT_EQ(h[k], f32_to_f16_ref(a[k]))
          << target << " 0x" << std::hex << std::bit_cast<uint32_t>(a[k]);
    }
  }
}

TEST_F(ArmRun, FloorDivisionAndLocalBuffer) {
  const int64_t n = 16;
  Buffer a = ir::make_buffer("A", DataType::i64(), {n});
  Buffer q = ir::make_buffer("Q", DataType::i64(), {n});
  Buffer t = ir::make_buffer("T", DataType::i64(), {n}, ir::MemScope::Local);
  Var i("i"), j("j");
  ir::Stmt fill = ir::make_for(
      i, 0, n, ir::ForKind::Serial,
      ir::make_store(
          t, ir::floordiv(ir::make_load(a, {i}), 3) * 10 + ir::floormod(ir::make_load(a, {i}), 4),
          {i}));
  ir::Stmt copy =
      ir::make_for(j, 0, n, ir::ForKind::Serial, ir::make_store(q, ir::make_load(t, {j}), {j}));
  LoweredFunc f{"divs", {a, q}, ir::make_allocate(t, ir::make_seq({fill, copy}))};
  std::vector<int64_t> av(n);
  for (int k = 0; k < n; ++k) av[k] = k * 3 - 25;
  auto out = run(f, "arm-neon", {bytes_of(av), std::vector<uint8_t>(8 * n)});
  auto got = values_of<int64_t>(out[1]);
  for (int k = 0; k < n; ++k) {
    int64_t p = av[k];
    int64_t fd = p / 3 - ((p % 3 != 0) && (p < 0));
    EXPECT_EQ(got[k], fd * 10 + (((p % 4) + 4) % 4)) << p;
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
