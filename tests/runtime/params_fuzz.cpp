// libFuzzer target for the params loader: every input is checked in memory (parse_params) and
// through the real loader (ParamsFile::open: fstat, mmap, the same checks) via a memfd. Either
// it is accepted, and then what was accepted must be exactly the input's payload, or it is
// refused with RuntimeError(kParams); anything else (a crash, an ASan report, another error)
// is a bug. Built with clang++-19 -fsanitize=fuzzer,address straight from runtime/src/params.cpp.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/params.h"
#include "kiln/runtime.h"

namespace {

int g_fd = -1;
std::string g_path;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "params_fuzz: %s\n", what);
    std::abort();
  }
}

// Returns true when accepted; aborts on any failure other than a params error.
template <typename F>
bool accepted(F&& load) {
  try {
    load();
    return true;
  } catch (const kiln::RuntimeError& e) {
    check(e.code() == kiln::ErrorCode::kParams, e.what());
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fd = memfd_create("params_fuzz", 0);
  check(g_fd >= 0, "memfd_create failed");
  g_path = "/proc/self/fd/" + std::to_string(g_fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::ParamsView view;
  const bool in_memory = accepted([&] { view = kiln::parse_params(data, size, "fuzz"); });
  if (in_memory) {
    check(size >= kiln::kParamsHeaderBytes, "accepted a file shorter than the header");
    check(view.payload == data + kiln::kParamsHeaderBytes, "payload not after the header");
    check(view.bytes == size - kiln::kParamsHeaderBytes, "payload size differs from the file's");
    check(view.checksum == kiln::params_checksum(view.payload, view.bytes), "checksum differs");
  }

  check(ftruncate(g_fd, 0) == 0 && pwrite(g_fd, data, size, 0) == static_cast<ssize_t>(size),
        "cannot write the memfd");
  const bool from_file = accepted([&] {
    const kiln::ParamsFile f = kiln::ParamsFile::open(g_path);
    check(f.bytes() == view.bytes && std::memcmp(f.payload(), view.payload, f.bytes()) == 0,
          "the mapped payload differs from the input's");
    check(reinterpret_cast<uintptr_t>(f.payload()) % kiln::kParamsAlignment == 0,
          "the mapped payload is not 64-byte aligned");
  });
  check(in_memory == from_file, "the file loader and the parser disagree");
  return 0;
}
