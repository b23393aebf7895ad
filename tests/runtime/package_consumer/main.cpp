// Links kiln's runtime through find_package(kiln_rt) and checks that both APIs answer: a model
// that does not exist is a clear load error from the C++ and the C API alike.
#include <cstdio>
#include <string>

#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"

int main() {
  try {
    kiln::Model::load("no-such-dir/model.so", "no-such-dir/model.params");
    std::puts("loaded a missing model");
    return 1;
  } catch (const kiln::RuntimeError& e) {
    if (e.code() != kiln::ErrorCode::kLoad ||
        std::string(e.what()).find("no-such-dir") == std::string::npos) {
      std::printf("unexpected error: %s\n", e.what());
      return 1;
    }
  }
  kiln_model* model = nullptr;
  if (kiln_model_load("no-such-dir/model.so", "no-such-dir/model.params", 1, &model) !=
      KILN_ERROR_LOAD) {
    std::puts("the C API did not report a load error");
    return 1;
  }
  std::printf("kiln_rt package ok: %d CPU(s)\n", kiln::available_cpu_count());
  return 0;
}
