/* A hand-written kernel module that speaks kernel_abi.h, standing in for what kiln's codegen
 * emits, so that the runtime and the kernel runner can be tested without the compiler. Built
 * for the host and, when a cross compiler is there, for AArch64 (run under qemu).
 *
 * Every kernel takes its sizes in buffers of their own (the ABI passes buffers only):
 *   add_one(n: i64[1], in: f32[n], out: f32[n])        out[i] = in[i] + 1, in parallel
 *   count_chunks(n: i64[1], chunks: i64[1])            how many chunks parallel_for made of n
 *   fail_at(n: i64[1], bad: i64[1])                    the chunk holding index `bad` returns 7
 *   add_one_ws(n: i64[1], in: f32[n], out: f32[n])     add_one through an ABI workspace buffer
 *                                                      (8: NULL workspace, 9: misaligned)
 *   trap(x: any)                                       dies of SIGILL (crash isolation tests)
 *   spin(x: any)                                       never returns (timeout tests)
 * Built with -DKILN_FIXTURE_INIT_FAILS, kiln_module_init returns 3 instead.
 */
#include <stdint.h>

#include "kiln/kernel_abi.h"

#define EXPORT __attribute__((visibility("default")))

static const kiln_runtime_api* g_api;

EXPORT int32_t kiln_module_init(const kiln_runtime_api* api) {
#ifdef KILN_FIXTURE_INIT_FAILS
  (void)api;
  return 3;
#else
  if (api && api->abi_version != KILN_ABI_VERSION) return 1;
  g_api = api;
  return 0;
#endif
}

/* As generated code does: the runtime's pool when init gave one, else serially. */
static int32_t parallel_for(int64_t extent, kiln_parallel_body body, void* closure) {
  if (g_api) return g_api->parallel_for(extent, body, closure);
  return extent > 0 ? body(0, extent, closure) : 0;
}

typedef struct {
  const float* in;
  float* out;
} AddOneClosure;

static int32_t add_one_body(int64_t begin, int64_t end, void* closure) {
  const AddOneClosure* c = (const AddOneClosure*)closure;
  for (int64_t i = begin; i < end; ++i) c->out[i] = c->in[i] + 1.0f;
  return 0;
}

EXPORT int32_t add_one(void* const* args) {
  AddOneClosure c = {(const float*)args[1], (float*)args[2]};
  return parallel_for(*(const int64_t*)args[0], add_one_body, &c);
}

EXPORT int32_t add_one_ws(void* const* args) {
  const int64_t n = *(const int64_t*)args[0];
  if (!g_api) return 10;
  float* ws = (float*)g_api->alloc_workspace((uint64_t)n * sizeof(float));
  if (!ws) return 8;
  if ((uintptr_t)ws % 64 != 0) {
    g_api->free_workspace(ws);
    return 9;
  }
  const float* in = (const float*)args[1];
  for (int64_t i = 0; i < n; ++i) ws[i] = in[i];
  AddOneClosure c = {ws, (float*)args[2]};
  const int32_t status = parallel_for(n, add_one_body, &c);
  g_api->free_workspace(ws);
  return status;
}

static int32_t count_chunks_body(int64_t begin, int64_t end, void* closure) {
  (void)begin;
  (void)end;
  __atomic_fetch_add((int64_t*)closure, 1, __ATOMIC_RELAXED);
  return 0;
}

EXPORT int32_t count_chunks(void* const* args) {
  int64_t* chunks = (int64_t*)args[1];
  *chunks = 0;
  return parallel_for(*(const int64_t*)args[0], count_chunks_body, chunks);
}

static int32_t fail_at_body(int64_t begin, int64_t end, void* closure) {
  const int64_t bad = *(const int64_t*)closure;
  return begin <= bad && bad < end ? 7 : 0;
}

EXPORT int32_t fail_at(void* const* args) {
  return parallel_for(*(const int64_t*)args[0], fail_at_body, args[1]);
}

EXPORT int32_t trap(void* const* args) {
  (void)args;
  __builtin_trap();
}

EXPORT int32_t spin(void* const* args) {
  volatile int64_t* x = (volatile int64_t*)args[0];
  for (;;) *x += 1;
}
