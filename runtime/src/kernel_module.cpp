// Loading kernel shared objects and calling their kernels.
//
// Every error names the file, and the symbol where there is one, with dlerror's own words:
// "cannot open shared object file", "invalid ELF header" and "undefined symbol" tell a user
// more than anything we could paraphrase.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/cpu_features.h"
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

// The architecture an ELF file was built for ("x86_64", "aarch64", or "" when it is not an
// ELF file we can read: dlopen then says what is wrong).
std::string elf_arch(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  unsigned char header[20] = {};
  const bool read = std::fread(header, 1, sizeof header, f) == sizeof header;
  std::fclose(f);
  if (!read || std::memcmp(header, "\x7f" "ELF", 4) != 0 || header[5] != 1) return "";
  const unsigned machine = header[18] | (header[19] << 8);  // e_machine, little-endian
  if (machine == 62) return "x86_64";
  if (machine == 183) return "aarch64";
  return "machine " + std::to_string(machine);
}

// The value of `key` in the module's "k=v;k=v" target record.
std::string record_field(const std::string& record, const std::string& key) {
  size_t at = 0;
  while (at < record.size()) {
    size_t end = record.find(';', at);
    if (end == std::string::npos) end = record.size();
    const std::string item = record.substr(at, end - at);
    if (item.compare(0, key.size() + 1, key + "=") == 0) return item.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

// What the CPU lacks of the module's recorded features (an older module without the record
// needs nothing we can check).
std::vector<std::string> missing_features(void* handle, std::string* target) {
  dlerror();
  const char* record = static_cast<const char*>(dlsym(handle, KILN_MODULE_TARGET_SYMBOL));
  if (!record) return {};
  *target = record_field(record, "target");
  std::vector<std::string> missing;
  const std::string features = record_field(record, "features");
  size_t at = 0;
  while (at < features.size()) {
    size_t end = features.find(',', at);
    if (end == std::string::npos) end = features.size();
    const std::string f = features.substr(at, end - at);
    if (!f.empty() && !cpu_has(f)) missing.push_back(f);
    at = end + 1;
  }
  return missing;
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
  // A module for another architecture: say so plainly rather than dlopen's "wrong ELF class".
  if (const std::string arch = elf_arch(path); !arch.empty() && arch != cpu_arch()) {
    throw RuntimeError(ErrorCode::kLoad, "kiln: '" + path + "' is built for " + arch +
                                             ", this machine is " + std::string(cpu_arch()));
  }
  // RTLD_NOW: an unresolved symbol fails here, at load, not mid-kernel. RTLD_LOCAL: kernels of
  // different modules may share names.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    throw RuntimeError(ErrorCode::kLoad,
                       "kiln: cannot load kernel module '" + path + "': " + dl_error_text());
  }
  // Before any of its code runs: an instruction the CPU lacks would be a SIGILL mid-kernel.
  std::string target;
  if (const std::vector<std::string> missing = missing_features(handle_, &target);
      !missing.empty()) {
    dlclose(handle_);
    handle_ = nullptr;
    std::string list;
    for (const std::string& f : missing) list += (list.empty() ? "" : ", ") + f;
    throw RuntimeError(ErrorCode::kLoad, "kiln: '" + path + "' (target " + target + ") needs " +
                                             list + ", this CPU lacks " +
                                             (missing.size() == 1 ? "it" : "them"));
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
