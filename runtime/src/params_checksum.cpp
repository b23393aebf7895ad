// The params checksum (format in kiln/params.h), serial and on a thread pool. Its own file so
// that it alone is compiled for speed (-O3, runtime/CMakeLists.txt) while the rest of the
// runtime is optimised for size: at -Os the lanes' loads and multiplies ran at a third of the
// speed, and this loop is what stands between opening a model and running it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kiln/params.h"
#include "kiln/runtime.h"

namespace kiln {
namespace {

constexpr uint64_t kPrime = 0x100000001b3ull;
constexpr int kLanes = 8;
constexpr std::size_t kBlock = kLanes * sizeof(uint64_t);

uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

uint64_t chunk_digest(const uint8_t* p, std::size_t n) {
  uint64_t lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = kParamsChecksumSeed ^ static_cast<uint64_t>(j);
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int j = 0; j < kLanes; ++j) lane[j] = (lane[j] ^ load_le64(p + i + 8 * j)) * kPrime;
  for (; i < n; ++i) lane[0] = (lane[0] ^ p[i]) * kPrime;
  uint64_t h = kParamsChecksumSeed ^ static_cast<uint64_t>(n);
  for (uint64_t l : lane) h = (h ^ l) * kPrime;
  return h;
}

std::size_t chunk_count(std::size_t bytes) {
  return (bytes + kParamsChecksumChunkBytes - 1) / kParamsChecksumChunkBytes;
}

uint64_t digest_of_chunk(const uint8_t* p, std::size_t bytes, std::size_t k) {
  const std::size_t at = k * kParamsChecksumChunkBytes;
  return chunk_digest(p + at, std::min(kParamsChecksumChunkBytes, bytes - at));
}

uint64_t finish(uint64_t h, std::size_t bytes) {
  return (h ^ static_cast<uint64_t>(bytes)) * kPrime;
}

struct ParallelJob {
  const uint8_t* payload;
  std::size_t bytes;
  uint64_t* digests;
};

int32_t hash_chunks(int64_t begin, int64_t end, void* closure) {
  const auto* job = static_cast<const ParallelJob*>(closure);
  for (int64_t k = begin; k < end; ++k)
    job->digests[k] = digest_of_chunk(job->payload, job->bytes, static_cast<std::size_t>(k));
  return 0;
}

}  // namespace

uint64_t params_checksum(const void* data, std::size_t bytes) noexcept {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = kParamsChecksumSeed;
  for (std::size_t k = 0, n = chunk_count(bytes); k < n; ++k)
    h = (h ^ digest_of_chunk(p, bytes, k)) * kPrime;
  return finish(h, bytes);
}

uint64_t params_checksum(const void* data, std::size_t bytes, ThreadPool& pool) {
  const std::size_t n = chunk_count(bytes);
  if (n < 2 || pool.num_threads() < 2) return params_checksum(data, bytes);
  std::vector<uint64_t> digests(n);
  ParallelJob job{static_cast<const uint8_t*>(data), bytes, digests.data()};
  pool.parallel_for(static_cast<int64_t>(n), hash_chunks, &job);
  uint64_t h = kParamsChecksumSeed;
  for (uint64_t d : digests) h = (h ^ d) * kPrime;
  return finish(h, bytes);
}

}  // namespace kiln
