/* A hand-written compiled model for `kiln run --farm`'s tests: one input x and one output y of
 * four floats, no params (an empty payload). Built three ways: y = x + 1, a run that crashes
 * (KILN_FIXTURE_CRASH) and one that never returns (KILN_FIXTURE_HANG).
 *
 * The params line's checksum is a placeholder: the checksum of an empty payload is the params
 * format's business, so the test writes the real one over the 16 placeholder digits. */
#include <stdint.h>

#include "kiln/kernel_abi.h"

int32_t kiln_module_init(const kiln_runtime_api* api) {
  (void)api;
  return 0;
}

int32_t kiln_model_run(void* const* inputs, void* const* outputs, void* workspace,
                       const void* params) {
  (void)workspace, (void)params;
#if defined(KILN_FIXTURE_CRASH)
  __builtin_trap();
#elif defined(KILN_FIXTURE_HANG)
  for (volatile int spin = 0;; spin = spin + 1) {
  }
#endif
  const float* x = (const float*)inputs[0];
  float* y = (float*)outputs[0];
  for (int i = 0; i < 4; ++i) y[i] = x[i] + 1.0f;
  return 0;
}

kiln_model_step_hook_fn kiln_model_step_hook = 0;

const char kiln_model_info[] =
    "kiln-model 2\nname fixture\nworkspace 0\nparams 0 c0ffeec0ffeec0ff\n"
    "input x f32 1 4\noutput y f32 1 4\n";
