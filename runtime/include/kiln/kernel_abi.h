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
 * Returns 0 on success, else one of the statuses below; its outputs are then undefined. */
/* An index the model computed at run time is outside its axis (ONNX Gather: [-N, N-1]). */
#define KILN_STATUS_INDEX_OUT_OF_RANGE 2
typedef int32_t (*kiln_kernel_fn)(void* const* args);

/* A compiled model (model.so) is a kernel module that also exports the two symbols below.
 *
 * `kiln_model_run` calls the model's kernels in order. inputs[i] / outputs[i] point at the
 * caller's buffer of input / output i; `workspace` at the model's scratch arena (its size is in
 * the info record); `params` at the first payload byte of the model's params file. Both must be
 * 64-byte aligned: the generated code assumes it. Returns 0, or the first non-zero status a
 * kernel returned. */
typedef int32_t (*kiln_model_run_fn)(void* const* inputs, void* const* outputs, void* workspace,
                                     const void* params);
#define KILN_MODEL_RUN_SYMBOL "kiln_model_run"

/* `kiln_model_info`: a NUL-terminated text record describing the model, one item per line
 * ('\n'), fields separated by one space, names free of whitespace:
 *   kiln-model 2                          format version (KILN_MODEL_INFO_VERSION)
 *   name NAME
 *   workspace BYTES
 *   params BYTES CHECKSUM                 the params payload it was built for; CHECKSUM is
 *                                         16 lowercase hex digits (FNV-1a 64, see params.h)
 *   verify S C S C ...                    optional: before step S first runs, params chunks
 *                                         [0, C) (params.h) must have been checked; S and C
 *                                         both increase along the line
 *   batch MIN MAX FLAGS C1 C2 ... [pad]   optional: a ranged batch. The record's shapes are
 *                                         one sample's; a run of b samples (MIN <= b <= MAX)
 *                                         is runs of batch classes, each on the next slices
 *                                         along axis 0 of every output and of each input whose
 *                                         FLAGS character ('1' or '0', one per input) is 1.
 *                                         Class 0 runs one sample; C1 < C2 ... (optional) are
 *                                         the samples of classes 1, 2 ...; with any, the
 *                                         runtime stores the class's index, as an integer, in
 *                                         the pointer slot after the last input. "pad": the
 *                                         last run of a batch may take the smallest class
 *                                         that holds what is left, the free samples copies
 *                                         of the last one
 *   input NAME DTYPE RANK D0 D1 ...       once per input, in order (RANK 0: a scalar)
 *   output NAME DTYPE RANK D0 D1 ...      once per output, in order
 * DTYPE is one of f32 f16 bf16 f64 i8 i16 i32 i64 u8 u16 u32 bool. Version 1 had no "verify"
 * line and a hook returning nothing. */
#define KILN_MODEL_INFO_SYMBOL "kiln_model_info"
#define KILN_MODEL_INFO_VERSION 2

/* `kiln_model_step_hook`: a writable function pointer in model.so, NULL unless the runtime or a
 * profiler sets it. When set, kiln_model_run calls it after every step with the step's index
 * (0-based, in the order of model.json's "layers"): a profiler times each layer from outside
 * the generated code, and the runtime checks the params chunks the next step needs. A non-zero
 * return stops the run with that status. Unset, it costs one load and one branch per step. */
typedef int32_t (*kiln_model_step_hook_fn)(int32_t step);
/* The status a hook returns when the params the next step needs are corrupt. */
#define KILN_STATUS_PARAMS_CORRUPT 3
/* The status of kiln_model_run given a batch class index the model does not have. */
#define KILN_STATUS_UNKNOWN_BATCH_CLASS 4
#define KILN_MODEL_STEP_HOOK_SYMBOL "kiln_model_step_hook"

/* A compiled model linked statically (`model.a` and its `model.h`): the symbols above would
 * clash between two models in one program, so the archive exports none of them. Everything is
 * internal to its object except one table, `kiln_model_<NAME>` (NAME the model's name with every
 * character outside [A-Za-z0-9_] turned into '_'), that carries what model.so exports by name.
 * kiln_model_load_static (runtime_c.h) / kiln::Model::load_static (model.h) take it. */
typedef struct kiln_model_entry {
  uint32_t abi_version;                /* KILN_ABI_VERSION */
  const char* target;                  /* the kiln_module_target record */
  const char* info;                    /* the kiln_model_info record */
  kiln_module_init_fn init;            /* kiln_module_init */
  kiln_model_run_fn run;               /* kiln_model_run */
  kiln_model_step_hook_fn* step_hook;  /* kiln_model_step_hook */
} kiln_model_entry;
#define KILN_MODEL_ENTRY_PREFIX "kiln_model_"

#ifdef __cplusplus
}
#endif

#endif /* KILN_KERNEL_ABI_H */
