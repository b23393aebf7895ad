/* A shared object with a kernel-shaped function but no kiln_module_init: the runtime must
 * refuse it by name rather than run kernels that never received the runtime API. */
#include <stdint.h>

__attribute__((visibility("default"))) int32_t add_one(void* const* args) {
  (void)args;
  return 0;
}
