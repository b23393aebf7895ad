/* Hand-written kernel modules for the farm tests: good, crashing, hanging, slow and wrong
 * candidates that speak kernel_abi.h. Every kernel has the signature
 *   (n: i64[1], in: f32[n], out: f32[n])
 * and, when correct, computes out[i] = in[i] + 1:
 *   add_one       correct
 *   add_one_slow  correct, after sleeping 1.5 s (a job to kill a worker in the middle of)
 *   add_two       wrong result: out[i] = in[i] + 2
 *   segv          writes through a null pointer
 *   hang          never returns
 *   fail_status   returns status 5 (a runtime error the kernel reports itself)
 */
#include <stdint.h>
#include <time.h>

#include "kiln/kernel_abi.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int32_t kiln_module_init(const kiln_runtime_api* api) {
  return api && api->abi_version != KILN_ABI_VERSION ? 1 : 0;
}

static int32_t add(void* const* args, float c) {
  const int64_t n = *(const int64_t*)args[0];
  const float* in = (const float*)args[1];
  float* out = (float*)args[2];
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] + c;
  return 0;
}

EXPORT int32_t add_one(void* const* args) {
  return add(args, 1.0f);
}

EXPORT int32_t add_one_slow(void* const* args) {
  struct timespec t = {1, 500000000};
  nanosleep(&t, 0);
  return add(args, 1.0f);
}

EXPORT int32_t add_two(void* const* args) {
  return add(args, 2.0f);
}

EXPORT int32_t segv(void* const* args) {
  (void)args;
  *(volatile int*)0 = 1;
  return 0;
}

EXPORT int32_t hang(void* const* args) {
  volatile float* out = (volatile float*)args[2];
  for (;;) out[0] += 1.0f;
}

EXPORT int32_t fail_status(void* const* args) {
  (void)args;
  return 5;
}
