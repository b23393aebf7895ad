// Configure-time probe: does the compiler link a libFuzzer target with the sanitizers?
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) {
  return 0;
}
