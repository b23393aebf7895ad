// Loading kernel shared objects and calling their kernels.
//
// Every error names the file, and the symbol where there is one, with dlerror's own words:
// "cannot open shared object file", "invalid ELF header" and "undefined symbol" tell a user
// more than anything we could paraphrase.
#include <dlfcn.h>

#include <string>
#include <utility>

#include "kiln/runtime.h"

namespace kiln {
namespace {

std::string dl_error_text() {
  const char* e = dlerror();
  return e ? e : "unknown dlerror";
}

// dlsym with a clean error state, so that a null symbol value is not mistaken for failure.
void* find_symbol(void* handle, const char* name, std::string* error) {
  dlerror();
  void* sym = dlsym(handle, name);
  if (const char* e = dlerror()) {
    *error = e;
    return nullptr;
  }
  if (!sym) *error = std::string(name) + " resolves to a null address";
  return sym;
}

}  // namespace

void Kernel::operator()(void* const* args) const {
  const int32_t status = run(args);
  if (status != 0) {
    throw RuntimeError(ErrorCode::kKernel, "kiln: kernel '" + name_ + "' of '" + module_path_ +
                                               "' failed with status " + std::to_string(status));
  }
}

int32_t Kernel::run(void* const* args) const noexcept {
  ThreadPool::Scope bind(pool_);
  return fn_(args);
}

KernelModule::KernelModule(const std::string& path, ThreadPool& pool) : path_(path), pool_(&pool) {
  // RTLD_NOW: an unresolved symbol fails here, at load, not mid-kernel. RTLD_LOCAL: kernels of
  // different modules may share names.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    throw RuntimeError(ErrorCode::kLoad,
                       "kiln: cannot load kernel module '" + path + "': " + dl_error_text());
  }
  std::string error;
  auto init =
      reinterpret_cast<kiln_module_init_fn>(find_symbol(handle_, KILN_MODULE_INIT_SYMBOL, &error));
  if (!init) {
    dlclose(handle_);
    handle_ = nullptr;
    throw RuntimeError(ErrorCode::kLoad, "kiln: '" + path + "' is not a kiln kernel module: no " +
                                             KILN_MODULE_INIT_SYMBOL + " (" + error + ")");
  }
  if (const int32_t status = init(ThreadPool::api()); status != 0) {
    dlclose(handle_);
    handle_ = nullptr;
    throw RuntimeError(ErrorCode::kLoad, "kiln: " + std::string(KILN_MODULE_INIT_SYMBOL) + " of '" +
                                             path + "' failed with status " +
                                             std::to_string(status));
  }
}

KernelModule::~KernelModule() {
  if (handle_) dlclose(handle_);
}

KernelModule::KernelModule(KernelModule&& other) noexcept
    : path_(std::move(other.path_)),
      handle_(std::exchange(other.handle_, nullptr)),
      pool_(other.pool_) {}

KernelModule& KernelModule::operator=(KernelModule&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
    pool_ = other.pool_;
  }
  return *this;
}

bool KernelModule::has_kernel(const std::string& name) const {
  std::string error;
  return handle_ && find_symbol(handle_, name.c_str(), &error) != nullptr;
}

Kernel KernelModule::kernel(const std::string& name) const {
  if (!handle_) {
    throw RuntimeError(ErrorCode::kInvalidArgument,
                       "kiln: kernel '" + name + "' looked up in a moved-from KernelModule");
  }
  std::string error;
  void* sym = find_symbol(handle_, name.c_str(), &error);
  if (!sym) {
    throw RuntimeError(ErrorCode::kSymbol, "kiln: kernel module '" + path_ + "' has no kernel '" +
                                               name + "': " + error);
  }
  return Kernel(reinterpret_cast<kiln_kernel_fn>(sym), pool_, name, path_);
}

void KernelModule::call(const std::string& name, void* const* args) const {
  kernel(name)(args);
}

}  // namespace kiln
