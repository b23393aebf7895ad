// Loading kernel shared objects and calling their kernels.
//
// Every error names the file, and the symbol where there is one, with dlerror's own words:
// "cannot open shared object file", "invalid ELF header" and "undefined symbol" tell a user
// more than anything we could paraphrase.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/cpu_features.h"
#include "kiln/runtime.h"
#include "message.h"
#include "target_record.h"

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
  if (!sym) *error = concat({name, " resolves to a null address"});
  return sym;
}

// What an ELF file says of itself, read before dlopen sees it.
struct ElfFacts {
  // "x86_64", "aarch64", "machine N"; "" when it is not a 64-bit little-endian ELF file (dlopen
  // then says what is wrong).
  std::string arch;
  // Non-empty when the program headers or a loadable segment reach past the end of the file:
  // dlopen maps such a segment anyway and the process dies of SIGSEGV/SIGBUS while relocating,
  // so a truncated .so must be refused here.
  std::string truncated;
};

ElfFacts inspect_elf(const std::string& path) {
  ElfFacts facts;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return facts;
  Elf64_Ehdr eh{};
  long size = -1;
  if (std::fread(&eh, sizeof eh, 1, f) == 1 && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB &&
      std::fseek(f, 0, SEEK_END) == 0) {
    size = std::ftell(f);
    facts.arch = eh.e_machine == EM_X86_64    ? "x86_64"
                 : eh.e_machine == EM_AARCH64 ? "aarch64"
                                              : concat({"machine ", Num(eh.e_machine)});
  }
  const uint64_t file_size = size < 0 ? 0 : static_cast<uint64_t>(size);
  const uint64_t table_end = eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
  // The section headers come last in the files lld writes: checking them catches a file cut
  // anywhere, even where what remains would still load.
  const uint64_t sections_end = eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize;
  if (facts.arch.empty()) {
    // Not ours to judge.
  } else if (eh.e_phentsize != sizeof(Elf64_Phdr) || table_end > file_size) {
    facts.truncated = concat(
        {"its program headers end at byte ", Num(table_end), ", the file has ", Num(file_size)});
  } else if (sections_end > file_size) {
    facts.truncated = concat(
        {"its section headers end at byte ", Num(sections_end), ", the file has ", Num(file_size)});
  } else if (std::fseek(f, static_cast<long>(eh.e_phoff), SEEK_SET) == 0) {
    for (unsigned i = 0; i < eh.e_phnum && facts.truncated.empty(); ++i) {
      Elf64_Phdr ph{};
      if (std::fread(&ph, sizeof ph, 1, f) != 1) break;
      if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > file_size) {
        facts.truncated =
            concat({"segment ", Num(i), " ends at byte ", Num(ph.p_offset + ph.p_filesz),
                    ", the file has ", Num(file_size)});
      }
    }
  }
  std::fclose(f);
  return facts;
}

}  // namespace

void Kernel::operator()(void* const* args) const {
  const int32_t status = run(args);
  if (status != 0) {
    throw_error(ErrorCode::kKernel, {"kiln: kernel '", name_, "' of '", module_path_,
                                     "' failed with status ", Num(status)});
  }
}

int32_t Kernel::run(void* const* args) const noexcept {
  ThreadPool::Scope bind(pool_);
  return fn_(args);
}

KernelModule::KernelModule(const std::string& path, ThreadPool& pool)
    : KernelModule(path, pool, {}, "a kiln kernel module") {}

KernelModule::KernelModule(const std::string& path, ThreadPool& pool,
                           std::initializer_list<const char*> required, const char* kind)
    : path_(path), pool_(&pool) {
  // A module for another architecture: say so plainly rather than dlopen's "wrong ELF class".
  const ElfFacts elf = inspect_elf(path);
  if (!elf.arch.empty() && elf.arch != cpu_arch()) {
    throw_error(ErrorCode::kLoad,
                {"kiln: '", path, "' is built for ", elf.arch, ", this machine is ", cpu_arch()});
  }
  if (!elf.truncated.empty()) {
    throw_error(ErrorCode::kLoad, {"kiln: '", path, "' is truncated or damaged: ", elf.truncated});
  }
  // RTLD_NOW: an unresolved symbol fails here, at load, not mid-kernel. RTLD_LOCAL: kernels of
  // different modules may share names.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    throw_error(ErrorCode::kLoad,
                {"kiln: cannot load kernel module '", path, "': ", dl_error_text()});
  }
  // From here a refusal closes the module again (no destructor runs for a throwing constructor).
  struct CloseUnlessKept {
    void*& handle;
    bool keep = false;
    ~CloseUnlessKept() {
      if (!keep) dlclose(std::exchange(handle, nullptr));
    }
  } guard{handle_};
  // What makes it the kind of module the caller wants, before anything else is said about it:
  // a plain library is "not a kiln model", whatever its CPU features.
  for (const char* name : required) {
    std::string error;
    if (!find_symbol(handle_, name, &error)) {
      throw_error(ErrorCode::kLoad,
                  {"kiln: '", path, "' is not ", kind, ": no ", name, " (", error, ")"});
    }
  }
  // Before any of its code runs: an instruction the CPU lacks would be a SIGILL mid-kernel (an
  // older module without the record needs nothing we can check).
  dlerror();
  if (const auto* text = static_cast<const char*>(dlsym(handle_, KILN_MODULE_TARGET_SYMBOL))) {
    const TargetRecord record = parse_target_record(text);
    std::size_t count = 0;
    if (const std::string missing = missing_cpu_features(record, &count); count > 0) {
      throw_error(ErrorCode::kLoad, {"kiln: '", path, "' (target ", record.target, ") needs ",
                                     missing, ", this CPU lacks ", count == 1 ? "it" : "them"});
    }
  }
  std::string error;
  auto init =
      reinterpret_cast<kiln_module_init_fn>(find_symbol(handle_, KILN_MODULE_INIT_SYMBOL, &error));
  if (!init) {
    throw_error(ErrorCode::kLoad, {"kiln: '", path, "' is not ", kind, ": no ",
                                   KILN_MODULE_INIT_SYMBOL, " (", error, ")"});
  }
  if (const int32_t status = init(ThreadPool::api()); status != 0) {
    throw_error(ErrorCode::kLoad, {"kiln: ", KILN_MODULE_INIT_SYMBOL, " of '", path,
                                   "' failed with status ", Num(status)});
  }
  guard.keep = true;
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
    throw_error(ErrorCode::kInvalidArgument,
                {"kiln: kernel '", name, "' looked up in a moved-from KernelModule"});
  }
  std::string error;
  void* sym = find_symbol(handle_, name.c_str(), &error);
  if (!sym) {
    throw_error(ErrorCode::kSymbol,
                {"kiln: kernel module '", path_, "' has no kernel '", name, "': ", error});
  }
  return Kernel(reinterpret_cast<kiln_kernel_fn>(sym), pool_, name, path_);
}

void KernelModule::call(const std::string& name, void* const* args) const {
  kernel(name)(args);
}

void* KernelModule::symbol(const char* name) const {
  std::string error;
  return handle_ ? find_symbol(handle_, name, &error) : nullptr;
}

std::size_t KernelModule::symbol_size(const void* address) {
  Dl_info info{};
  void* entry = nullptr;  // dladdr1 stores a const ElfW(Sym)* here
  if (!dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !entry) return 0;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  return info.dli_saddr == address ? static_cast<std::size_t>(sym->st_size) : 0;
}

}  // namespace kiln
