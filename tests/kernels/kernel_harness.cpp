#include "kernel_harness.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "codegen/build.h"
#include "codegen/target.h"
#include "kiln/runtime.h"
#include "rpc/kernel_exec.h"

namespace kiln::testing {

namespace {

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  return static_cast<uint16_t>((u + 0x7fff + lsb) >> 16);
}
float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_f16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
float f16_to_f32(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }

// A private scratch folder for one kernel's shared object.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kiln-kernel-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

float round_to(float v, ir::DataType t) {
  if (t == ir::DataType::bf16()) return bf16_to_f32(f32_to_bf16(v));
  if (t == ir::DataType::f16()) return f16_to_f32(f32_to_f16(v));
  return v;
}

Bytes encode(const std::vector<float>& v, ir::DataType t) {
  Bytes out(v.size() * t.bytes());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == ir::DataType::f32()) {
      std::memcpy(&out[i * 4], &v[i], 4);
    } else {
      uint16_t h = t == ir::DataType::bf16() ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

std::vector<float> decode(const Bytes& b, ir::DataType t) {
  std::vector<float> out(b.size() / t.bytes());
  for (size_t i = 0; i < out.size(); ++i) {
    if (t == ir::DataType::f32()) {
      std::memcpy(&out[i], &b[i * 4], 4);
    } else {
      uint16_t h;
      std::memcpy(&h, &b[i * 2], 2);
      out[i] = t == ir::DataType::bf16() ? bf16_to_f32(h) : f16_to_f32(h);
    }
  }
  return out;
}

std::vector<float> random_values(size_t n, uint32_t seed, ir::DataType t) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = round_to(dist(rng), t);
  return v;
}

double tolerance(ir::DataType t) {
  if (t == ir::DataType::bf16()) return 2e-2;
  if (t == ir::DataType::f16()) return 1e-2;
  return 1e-4;
}

::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                     double rtol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::fabs(double(got[i]) - double(want[i]));
    if (!(err <= rtol * std::max(1.0, std::fabs(double(want[i]))))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ; first at "
                                       << first << ": got " << got[first] << ", want " << want[first];
}

TargetRun run_on_target(const ir::LoweredFunc& f, const std::string& target_name,
                        const std::vector<Bytes>& args, const std::vector<int>& output_indices) {
  TargetRun run;
  codegen::Target target = codegen::target_from_name(target_name);
  bool native = codegen::host_can_run(target);
  if (!native && !target.is_aarch64()) {
    run.skip_reason = target_name + " needs CPU features this machine lacks";
    return run;
  }
  if (!native && (std::string(KILN_AARCH64_RUNNER).empty() || aarch64_qemu_prefix().empty())) {
    run.skip_reason = "no qemu-aarch64 or no AArch64 kernel runner here";
    return run;
  }
  TempDir dir;
  std::string so = (dir.path / (f.name + ".so")).string();
  codegen::build_shared_object({f}, target, so);
  if (!native) {
    KernelRun r = run_kernel_out_of_process(KILN_AARCH64_RUNNER, true, so, f.name, args,
                                            output_indices, 1, 2);
    run.outputs = std::move(r.outputs);
    return run;
  }
  static ThreadPool pool(2);
  KernelModule module(so, pool);
  std::vector<AlignedBuffer> buffers;
  std::vector<void*> ptrs;
  for (const Bytes& a : args) {
    buffers.emplace_back(a.size());
    std::memcpy(buffers.back().data(), a.data(), a.size());
  }
  for (AlignedBuffer& b : buffers) ptrs.push_back(b.data());
  module.call(f.name, ptrs.data());
  for (int i : output_indices) {
    const auto* p = static_cast<const uint8_t*>(buffers[i].data());
    run.outputs.emplace_back(p, p + buffers[i].size());
  }
  return run;
}

}  // namespace kiln::testing
