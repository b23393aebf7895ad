// Helpers for the codegen tests: build a .so from hand-written LoweredFuncs, load it with
// dlopen, and call its kernels with a small runtime API of our own (the real runtime lives
// in runtime/ and is tested there). Also reads a .so's ELF dynamic section.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/build.h"
#include "kiln/kernel_abi.h"

namespace kiln::codegen::testing {

// A kiln_runtime_api whose parallel_for runs chunks on std::threads (or serially) and
// counts calls, and whose workspace comes from aligned_alloc (and can be made to fail).
struct TestRuntime {
  static kiln_runtime_api api(bool threaded = true);
  static int parallel_calls();
  static int live_workspaces();
  static void fail_next_allocations(bool fail);
};

// A unique path under the test's temporary directory.
std::string temp_path(const std::string& stem);

// A dlopen()ed kernel module; closes on destruction.
class LoadedModule {
 public:
  explicit LoadedModule(const std::string& path);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  // Calls kiln_module_init; `api` may be null.
  int32_t init(const kiln_runtime_api* api);
  int32_t call(const std::string& kernel, std::vector<void*> args);

 private:
  void* handle_ = nullptr;
};

// "A3" from ("A", 3). (Spelled out: GCC 12 warns falsely about "A" + std::to_string(3).)
inline std::string numbered(const char* prefix, int64_t k) {
  std::string s(prefix);
  s += std::to_string(k);
  return s;
}

// Builds `funcs` for `target` into a fresh .so and returns its path.
std::string build(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                  const CodegenOptions& options = {});

// From the ELF file's dynamic section and symbol table.
struct ElfSummary {
  uint16_t machine = 0;  // EM_X86_64, EM_AARCH64
  std::vector<std::string> needed;
  std::vector<std::string> undefined;  // undefined dynamic symbols
  std::vector<std::string> exported;   // defined global dynamic symbols
};
ElfSummary read_elf(const std::string& path);

// Round-to-nearest-even references, independent of the code under test.
uint16_t f32_to_bf16_ref(float f);
float bf16_to_f32_ref(uint16_t h);
uint16_t f32_to_f16_ref(float f);
float f16_to_f32_ref(uint16_t h);

}  // namespace kiln::codegen::testing
