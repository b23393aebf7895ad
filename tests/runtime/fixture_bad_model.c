/* A hand-written "model" .so whose kiln_model_info record is wrong in one way (chosen at compile
 * time), for the runtime's refusals of records that compile_model would never write: a newer
 * format version, or a record that is not NUL-terminated. */
#include <stdint.h>

#include "kiln/kernel_abi.h"

int32_t kiln_module_init(const kiln_runtime_api* api) {
  (void)api;
  return 0;
}

int32_t kiln_model_run(void* const* inputs, void* const* outputs, void* workspace,
                       const void* params) {
  (void)inputs, (void)outputs, (void)workspace, (void)params;
  return 0;
}

kiln_model_step_hook_fn kiln_model_step_hook = 0;

#if defined(KILN_FIXTURE_INFO_UNTERMINATED)
const char kiln_model_info[10] = {'k', 'i', 'l', 'n', '-', 'm', 'o', 'd', 'e', 'l'};
#else
const char kiln_model_info[] = "kiln-model 3\nname from_the_future\n";
#endif
