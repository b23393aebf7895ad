// The C API: thin wrappers that turn every exception into a status code and a thread-local
// message, so that nothing C++ crosses into C callers.
#include "kiln/runtime_c.h"

#include <string>

#include "c_api.h"
#include "kiln/runtime.h"

struct kiln_thread_pool {
  kiln::ThreadPool pool;
  explicit kiln_thread_pool(int n) : pool(n) {}
};

struct kiln_module {
  kiln::KernelModule module;
};

namespace {

static_assert(static_cast<int>(kiln::ErrorCode::kInvalidArgument) == KILN_ERROR_INVALID_ARGUMENT);
static_assert(static_cast<int>(kiln::ErrorCode::kLoad) == KILN_ERROR_LOAD);
static_assert(static_cast<int>(kiln::ErrorCode::kSymbol) == KILN_ERROR_SYMBOL);
static_assert(static_cast<int>(kiln::ErrorCode::kKernel) == KILN_ERROR_KERNEL);
static_assert(static_cast<int>(kiln::ErrorCode::kIo) == KILN_ERROR_IO);
static_assert(static_cast<int>(kiln::ErrorCode::kInternal) == KILN_ERROR_INTERNAL);
static_assert(static_cast<int>(kiln::ErrorCode::kParams) == KILN_ERROR_PARAMS);

thread_local std::string t_last_error;

}  // namespace

namespace kiln::c_api {

kiln_status fail(kiln_status code, const char* message) noexcept {
  try {
    t_last_error = message;
  } catch (...) {
    // No memory even for the message: the status code still says what happened.
  }
  return code;
}

}  // namespace kiln::c_api

namespace {
using kiln::c_api::fail;
using kiln::c_api::guarded;
}  // namespace

extern "C" {

const char* kiln_last_error(void) {
  return t_last_error.c_str();
}

kiln_status kiln_thread_pool_create(int32_t num_threads, kiln_thread_pool** out) {
  if (!out) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_thread_pool_create: out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new kiln_thread_pool(num_threads); });
}

void kiln_thread_pool_destroy(kiln_thread_pool* pool) {
  delete pool;
}

kiln_status kiln_module_load(const char* path, kiln_thread_pool* pool, kiln_module** out) {
  if (!out || !path) {
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_module_load: path or out is NULL");
  }
  *out = nullptr;
  return guarded([&] {
    kiln::ThreadPool& p = pool ? pool->pool : kiln::default_thread_pool();
    *out = new kiln_module{kiln::KernelModule(path, p)};
  });
}

void kiln_module_free(kiln_module* module) {
  delete module;
}

kiln_status kiln_module_call(kiln_module* module, const char* kernel, void* const* args) {
  if (!module || !kernel) {
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_module_call: module or kernel is NULL");
  }
  return guarded([&] { module->module.call(kernel, args); });
}

}  // extern "C"
