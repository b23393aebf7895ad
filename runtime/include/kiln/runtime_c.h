/* The C API of kiln's runtime: the same thread pool and kernel loader as runtime.h, behind
 * status codes, for C programs and for callers across which no C++ exception may travel.
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

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_C_H */
