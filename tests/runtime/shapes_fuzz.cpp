// libFuzzer target for the shape arguments of the C API: kiln_model_run_shaped on a model with a
// ranged batch (1 to 8, a batch class of 4 samples, the last run padded up to it), given any number
// of tensors of any rank and dimensions. Either the call is refused (KILN_ERROR_INVALID_INPUT or
// _ARGUMENT: nothing ran) or the shapes were the model's with a batch in range, and then every
// sample's output is right; anything else (another status, a crash, an ASan report of a read or
// write past a buffer sized for the largest batch) is a bug. The model is a hand-written entry
// table (the static-model ABI): y = x + m per sample, x [batch, 4] sliced, m [4] shared by every
// sample. Built with clang++-19 -fsanitize=fuzzer,address straight from runtime/src.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/cpu_features.h"
#include "kiln/kernel_abi.h"
#include "kiln/params.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"

namespace {

constexpr int64_t kMaxBatch = 8, kWidth = 4;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "shapes_fuzz: %s\n", what);
    std::abort();
  }
}

kiln_model_step_hook_fn g_hook = nullptr;

int32_t init(const kiln_runtime_api*) {
  return 0;
}

// The generated executor's contract: the class index in the slot after the inputs (0: one
// sample, 1: the class of 4), the slices already offset by the runtime.
int32_t run(void* const* inputs, void* const* outputs, void*, const void*) {
  const auto samples = reinterpret_cast<uintptr_t>(inputs[2]) == 1 ? 4 : 1;
  const auto* x = static_cast<const float*>(inputs[0]);
  const auto* m = static_cast<const float*>(inputs[1]);
  auto* y = static_cast<float*>(outputs[0]);
  for (int64_t i = 0; i < samples * kWidth; ++i) y[i] = x[i] + m[i % kWidth];
  return 0;
}

kiln_model* g_model = nullptr;

kiln_model* model() {
  if (g_model) return g_model;
  char dir[] = "/tmp/kiln-shapes-fuzz-XXXXXX";
  check(mkdtemp(dir) != nullptr, "mkdtemp");
  const std::string params = std::string(dir) + "/model.params";
  kiln::write_params_file(params, nullptr, 0);
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(kiln::params_checksum(nullptr, 0)));
  static const std::string info = std::string("kiln-model 2\nname f\nworkspace 0\nparams 0 ") +
                                  checksum +
                                  "\nbatch 1 8 10 4 pad\ninput x f32 2 1 4\ninput m f32 1 4\n"
                                  "output y f32 2 1 4\n";
  static const std::string target =
      std::string("target=test;arch=") + std::string(kiln::cpu_arch()) + ";features=";
  static const kiln_model_entry entry = {KILN_ABI_VERSION, target.c_str(), info.c_str(), init, run,
                                         &g_hook};
  check(kiln_model_load_static(&entry, params.c_str(), 1, &g_model) == KILN_OK, kiln_last_error());
  std::remove(params.c_str());
  std::remove(dir);
  return g_model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Bytes -> up to 3 tensors, each a rank (0 to 5) then one signed byte or 8 bytes per dim.
  float x[kMaxBatch * kWidth], m[kWidth], y[kMaxBatch * kWidth];
  for (int i = 0; i < kMaxBatch * kWidth; ++i) x[i] = static_cast<float>(i), y[i] = -1;
  for (int i = 0; i < kWidth; ++i) m[i] = 100.0f * static_cast<float>(i + 1);
  int64_t shapes[3][5] = {};
  kiln_tensor tensors[3] = {};
  size_t at = 0;
  auto next = [&]() -> int64_t {
    if (at >= size) return 0;
    const uint8_t tag = data[at++];
    if (tag != 0x80 || at + 8 > size) return static_cast<int8_t>(tag);
    int64_t v;
    std::memcpy(&v, data + at, 8);
    at += 8;
    return v;
  };
  const int32_t count = size ? data[at++] % 4 : 0;
  for (int32_t t = 0; t < count; ++t) {
    const int32_t rank = static_cast<int32_t>(next() & 7) % 6;
    for (int32_t d = 0; d < rank; ++d) shapes[t][d] = next();
    tensors[t] = {t == 1 ? static_cast<const void*>(m) : x, rank, shapes[t]};
  }
  void* outputs[] = {y};
  const kiln_status status = kiln_model_run_shaped(model(), tensors, count, outputs);
  if (status != KILN_OK) {
    check(status == KILN_ERROR_INVALID_INPUT || status == KILN_ERROR_INVALID_ARGUMENT,
          kiln_last_error());
    return 0;
  }
  // Accepted: the shapes must have been x [b, 4] with b in 1..8 and m [4].
  check(count == 2 && tensors[0].ndim == 2 && shapes[0][1] == kWidth && shapes[0][0] >= 1 &&
            shapes[0][0] <= kMaxBatch && tensors[1].ndim == 1 && shapes[1][0] == kWidth,
        "a shape the model does not take was run");
  for (int64_t i = 0; i < shapes[0][0] * kWidth; ++i)
    check(y[i] == x[i] + m[i % kWidth], "a sample's output is wrong");
  return 0;
}
