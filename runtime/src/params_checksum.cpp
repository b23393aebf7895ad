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

uint64_t digest_of_chunk(const uint8_t* p, std::size_t bytes, std::size_t k) {
  const std::size_t at = k * kParamsChecksumChunkBytes;
  return chunk_digest(p + at, std::min(kParamsChecksumChunkBytes, bytes - at));
}

// Chunks [first, first + count) of a payload, hashed into digests[0, count) on a pool.
struct ParallelJob {
  const uint8_t* payload;
  std::size_t bytes;
  std::size_t first;
  uint64_t* digests;
};

int32_t hash_chunks(int64_t begin, int64_t end, void* closure) {
  const auto* job = static_cast<const ParallelJob*>(closure);
  for (int64_t k = begin; k < end; ++k)
    job->digests[k] = digest_of_chunk(job->payload, job->bytes, job->first + std::size_t(k));
  return 0;
}

}  // namespace

void params_hash_chunks(const uint8_t* payload, std::size_t bytes, std::size_t first,
                        std::size_t count, uint64_t* digests, ThreadPool* pool) {
  if (pool && count > 1 && pool->num_threads() > 1) {
    ParallelJob job{payload, bytes, first, digests};
    pool->parallel_for(static_cast<int64_t>(count), hash_chunks, &job);
    return;
  }
  for (std::size_t k = 0; k < count; ++k) digests[k] = digest_of_chunk(payload, bytes, first + k);
}

uint64_t params_checksum(const void* data, std::size_t bytes) noexcept {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = kParamsChecksumSeed;
  for (std::size_t k = 0, n = params_chunk_count(bytes); k < n; ++k)
    h = (h ^ digest_of_chunk(p, bytes, k)) * kPrime;
  return (h ^ static_cast<uint64_t>(bytes)) * kPrime;
}

std::vector<uint8_t> params_chunk_table(const void* data, std::size_t bytes) {
  std::vector<uint8_t> table(8 * params_chunk_count(bytes));
  for (std::size_t k = 0; k < table.size() / 8; ++k) {
    uint64_t d = digest_of_chunk(static_cast<const uint8_t*>(data), bytes, k);
    for (int i = 0; i < 8; ++i, d >>= 8) table[8 * k + i] = static_cast<uint8_t>(d);
  }
  return table;
}

uint64_t params_checksum_of_table(const uint8_t* table, uint64_t chunks, uint64_t bytes) noexcept {
  uint64_t h = kParamsChecksumSeed;
  for (uint64_t k = 0; k < chunks; ++k) h = (h ^ load_le64(table + 8 * k)) * kPrime;
  return (h ^ bytes) * kPrime;
}

}  // namespace kiln
