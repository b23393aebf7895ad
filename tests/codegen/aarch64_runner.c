/* A tiny loader for AArch64 kernel .so files, cross-compiled and run under qemu-aarch64 by
 * the codegen tests: arm_runner SO KERNEL NBUF BYTES IN OUT loads NBUF buffers of BYTES
 * bytes each from IN, calls KERNEL (after kiln_module_init(NULL)), writes them to OUT. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s SO KERNEL NBUF BYTES IN OUT\n", argv[0]);
    return 2;
  }
  void* so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  int32_t (*init)(const void*) = (int32_t(*)(const void*))dlsym(so, "kiln_module_init");
  int32_t (*kernel)(void* const*) = (int32_t(*)(void* const*))dlsym(so, argv[2]);
  if (!init || !kernel) {
    fprintf(stderr, "missing symbol\n");
    return 4;
  }
  int n = atoi(argv[3]);
  size_t bytes = (size_t)atol(argv[4]);
  void* bufs[64];
  FILE* in = fopen(argv[5], "rb");
  if (!in || n > 64) return 5;
  for (int i = 0; i < n; ++i) {
    bufs[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (fread(bufs[i], 1, bytes, in) != bytes) return 6;
  }
  fclose(in);
  if (init(NULL) != 0) return 7;
  int32_t status = kernel(bufs);
  FILE* out = fopen(argv[6], "wb");
  if (!out) return 8;
  for (int i = 0; i < n; ++i) fwrite(bufs[i], 1, bytes, out);
  fclose(out);
  return status == 0 ? 0 : 9;
}
