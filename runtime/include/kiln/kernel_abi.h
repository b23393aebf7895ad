/* The contract between a kernel shared object emitted by kiln and the runtime that loads it.
 *
 * Plain C so that any host program (and the generated code) can speak it. A kernel `.so`
 * needs nothing from the process it is loaded into (no libc, no libm, no pthread): the only
 * services it uses are the ones the runtime hands it through `kiln_module_init`.
 */
#ifndef KILN_KERNEL_ABI_H
#define KILN_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_VERSION 1

/* Runs iterations [begin, end) of a parallel loop; returns 0 on success. */
typedef int32_t (*kiln_parallel_body)(int64_t begin, int64_t end, void* closure);

typedef struct kiln_runtime_api {
  uint32_t abi_version; /* KILN_ABI_VERSION */
  /* Splits [0, extent) into contiguous chunks, runs `body` on them across the pool and
   * returns the first non-zero status (0 when every chunk succeeded). */
  int32_t (*parallel_for)(int64_t extent, kiln_parallel_body body, void* closure);
  /* Scratch memory for a kernel's intermediate buffers that are too big for the stack
   * (64-byte aligned; NULL when out of memory). Kernels free what they allocate. */
  void* (*alloc_workspace)(uint64_t nbytes);
  void (*free_workspace)(void* ptr);
} kiln_runtime_api;

/* Exported by every kernel module. Stores `api` for the module's parallel loops; until it is
 * called (or when given NULL) parallel loops run serially on the calling thread. */
typedef int32_t (*kiln_module_init_fn)(const kiln_runtime_api* api);
#define KILN_MODULE_INIT_SYMBOL "kiln_module_init"

/* Exported by every kernel module: what it was built for, as one NUL-terminated line
 * "target=NAME;arch=x86_64|aarch64;features=F1,F2,..." (LLVM feature names, the same as
 * kiln/cpu_features.h reports). The runtime refuses a module whose features the CPU lacks
 * before any of its code runs. */
#define KILN_MODULE_TARGET_SYMBOL "kiln_module_target"

/* Every kernel: `args` holds one pointer per buffer argument, in declaration order.
 * Returns 0 on success. */
typedef int32_t (*kiln_kernel_fn)(void* const* args);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KERNEL_ABI_H */
