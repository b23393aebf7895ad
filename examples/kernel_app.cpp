// A board application: it links only kiln's runtime (libkiln_rt: no LLVM, no gRPC), loads a
// kernel shared object that `kiln inspect --so` wrote (on any machine, for this board's
// target), runs it on buffers of the sizes `kiln inspect --so` listed, and reports the time.
//
//   kiln inspect --op dense --shape 64,256,128 --target arm-neon --so dense.so
//   kernel_app dense.so dense 32768 135168 65536        # the byte counts it listed, in order
//
// Inputs are filled with a deterministic pattern; the last argument is treated as the output
// and its checksum printed, so two builds of the same kernel can be compared on the board.
// The byte counts must be the ones `kiln inspect --so` printed: a bare kernel .so carries
// no shapes (the compiled model's params and metadata will, once `kiln compile` exists).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/timing.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s KERNEL.so NAME BYTES [BYTES ...] [--threads N] [--repeat N]\n",
                 argv[0]);
    return 2;
  }
  int threads = 0, repeat = 20;
  std::vector<size_t> sizes;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--threads" || a == "--repeat") && i + 1 < argc) {
      (a == "--threads" ? threads : repeat) = std::atoi(argv[++i]);
      continue;
    }
    char* end = nullptr;
    unsigned long long n = std::strtoull(argv[i], &end, 10);
    if (*end != '\0' || n == 0) {
      std::fprintf(stderr, "%s: '%s' is not a positive byte count\n", argv[0], argv[i]);
      return 2;
    }
    sizes.push_back(n);
  }
  try {
    kiln::ThreadPool pool(threads);  // 0: the CPUs this process may really use
    kiln::KernelModule module(argv[1], pool);
    kiln::Kernel kernel = module.kernel(argv[2]);
    std::vector<kiln::AlignedBuffer> buffers;
    std::vector<void*> args;
    for (size_t i = 0; i < sizes.size(); ++i) {
      buffers.emplace_back(sizes[i]);
      auto* f = static_cast<float*>(buffers.back().data());
      // f32-looking pattern in [-1, 1); for 16-bit types it is simply bytes: both are fine
      // inputs for timing and for comparing two builds.
      for (size_t j = 0; j < sizes[i] / sizeof(float); ++j) f[j] = float((j * 7 + i) % 17) / 8.5f - 1.0f;
      args.push_back(buffers.back().data());
    }
    kiln::TimingOptions timing;
    timing.warmup = 1;
    timing.repeat = repeat;
    const kiln::Timing t = kiln::time_calls([&] { kernel(args.data()); }, timing);
    const auto* out = static_cast<const unsigned char*>(buffers.back().data());
    unsigned long long checksum = 1469598103934665603ull;  // FNV-1a over the output bytes
    for (size_t j = 0; j < sizes.back(); ++j) checksum = (checksum ^ out[j]) * 1099511628211ull;
    std::printf("%s: median %.4f ms over %d runs on %d thread(s), output checksum %016llx\n",
                argv[2], t.median_ms(), repeat, pool.num_threads(), checksum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}
