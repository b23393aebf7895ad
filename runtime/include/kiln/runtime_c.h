/* The C API of kiln's runtime: the same thread pool, kernel loader and model loader as
 * runtime.h and model.h, behind status codes, for C programs and for callers across which no
 * C++ exception may travel.
 *
 * Every function returns KILN_OK or an error code and, on error, leaves a message naming the
 * file/symbol at fault in kiln_last_error() (per thread, valid until the next failing call on
 * that thread).
 */
#ifndef KILN_RUNTIME_C_H
#define KILN_RUNTIME_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t kiln_status;
#define KILN_OK 0
#define KILN_ERROR_INVALID_ARGUMENT 1
#define KILN_ERROR_LOAD 2
#define KILN_ERROR_SYMBOL 3
#define KILN_ERROR_KERNEL 4
#define KILN_ERROR_IO 5
#define KILN_ERROR_INTERNAL 6
#define KILN_ERROR_PARAMS 7 /* a params file is invalid, or belongs to another model */
/* an input's shape is not the model's, or its values are outside what the model accepts (an
 * index out of range of the axis it indexes) */
#define KILN_ERROR_INVALID_INPUT 8

typedef struct kiln_thread_pool kiln_thread_pool;
typedef struct kiln_module kiln_module;

/* The message of the last failing call on this thread ("" if none). */
const char* kiln_last_error(void);

/* num_threads == 0: KILN_NUM_THREADS, else the CPUs the process may use. */
kiln_status kiln_thread_pool_create(int32_t num_threads, kiln_thread_pool** out);
void kiln_thread_pool_destroy(kiln_thread_pool* pool);

/* pool may be NULL (the process-wide default pool); it must outlive the module. */
kiln_status kiln_module_load(const char* path, kiln_thread_pool* pool, kiln_module** out);
void kiln_module_free(kiln_module* module);
/* Looks `kernel` up and runs it; a non-zero kernel status is KILN_ERROR_KERNEL. */
kiln_status kiln_module_call(kiln_module* module, const char* kernel, void* const* args);

/* ---- Compiled models (model.so + model.params; kiln/model.h is the C++ face) ---- */

typedef struct kiln_model kiln_model;

/* One input or output of a model. The pointers stay valid while the model lives. */
typedef struct kiln_tensor_info {
  const char* name;
  const char* dtype;    /* "f32", "bf16", "i8", ... */
  int32_t ndim;         /* 0 for a scalar */
  const int64_t* shape; /* ndim entries */
  uint64_t bytes;       /* what the caller's buffer holds */
  /* 1: axis 0 is the model's ranged batch; shape and bytes are then those of its smallest batch
   * (kiln_model_batch_range), and a batch of b samples holds bytes / min * b. */
  int32_t batched;
} kiln_tensor_info;

/* Loads and checks the model; num_threads == 0: KILN_NUM_THREADS, else the usable CPUs. Errors:
 * KILN_ERROR_LOAD (not a kiln model, another architecture, a CPU feature missing, a damaged
 * .so), KILN_ERROR_PARAMS (a damaged params file, or one built for another model), KILN_ERROR_IO
 * (a file that cannot be read). The params' bytes are checked chunk by chunk during the first
 * run, each before a step reads it (kiln/model.h): a corrupt chunk fails that run with
 * KILN_ERROR_PARAMS, or kiln_model_verify_params with it when called first. */
kiln_status kiln_model_load(const char* so_path, const char* params_path, int32_t num_threads,
                            kiln_model** out);
/* A model linked statically from its model.a: `entry` is the kiln_model_<NAME> table its model.h
 * declares (kernel_abi.h); the same checks and errors as kiln_model_load. */
struct kiln_model_entry;
kiln_status kiln_model_load_static(const struct kiln_model_entry* entry, const char* params_path,
                                   int32_t num_threads, kiln_model** out);
void kiln_model_free(kiln_model* model);
int32_t kiln_model_num_inputs(const kiln_model* model);
int32_t kiln_model_num_outputs(const kiln_model* model);
kiln_status kiln_model_input_info(const kiln_model* model, int32_t index, kiln_tensor_info* out);
kiln_status kiln_model_output_info(const kiln_model* model, int32_t index, kiln_tensor_info* out);
/* The ranged batch the model was compiled for (kiln compile --range); 0 and 0 without one. */
kiln_status kiln_model_batch_range(const kiln_model* model, int64_t* min_batch, int64_t* max_batch);
/* Checks every params chunk no run has checked yet; KILN_ERROR_PARAMS naming the first
 * corrupt one. */
kiln_status kiln_model_verify_params(const kiln_model* model);
/* inputs / outputs: one pointer per input / output, in order (the counts above). Allocates
 * nothing; a kernel failure is KILN_ERROR_KERNEL, a corrupt params chunk KILN_ERROR_PARAMS. */
kiln_status kiln_model_run(kiln_model* model, const void* const* inputs, void* const* outputs);
/* A tensor as the caller holds it: its data and its shape (ndim entries; 0 for a scalar). */
typedef struct kiln_tensor {
  const void* data;
  int32_t ndim;
  const int64_t* shape;
} kiln_tensor;
/* As kiln_model_run, with each input's shape stated: num_inputs must be the model's count and
 * every shape exactly the model's, else KILN_ERROR_INVALID_INPUT naming the input and both
 * shapes, and nothing runs. A model with a ranged batch takes any batch in its range along axis
 * 0 of its batched inputs (the same for all), and writes that many samples to every output;
 * kiln_model_run runs its smallest batch. An index input whose values are out of range is
 * KILN_ERROR_INVALID_INPUT too (kiln_model_run reports it so as well). */
kiln_status kiln_model_run_shaped(kiln_model* model, const kiln_tensor* inputs, int32_t num_inputs,
                                  void* const* outputs);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_C_H */
