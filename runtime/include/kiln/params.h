// The params file of a compiled model (`model.params`): the model's weights, pre-packed by the
// compiler into one payload that the runtime maps read-only and hands to the model's kernels.
// This header holds both sides: the reader the runtime uses and the writer the compiler uses
// (both in libkiln_rt, which the compiler links too).
//
// Layout, version 4 (integers little-endian):
//   offset  size  field
//        0     8  magic "KILNPRM\0"
//        8     4  u32 format version (4)
//       12     4  u32 payload offset (64: the header's size)
//       16     8  u64 payload bytes (B)
//       24     8  u64 checksum of the payload (below)
//       32    32  reserved, zero
//       64     B  payload
//   64 + B  8 * K  the chunk table: the digest of each of the payload's K chunks (below), u64
//                  each; the file ends exactly where the table does
// The payload starts 64 bytes into the file, so in a page-aligned mapping it is 64-byte aligned
// (a cache line, and the widest vector kiln emits): offsets the compiler aligns to 64 stay
// aligned in memory.
//
// The checksum is built from FNV-1a 64 (http://www.isthe.com/chongo/tech/comp/fnv/: multiply by
// P = 0x100000001b3 mod 2^64, seed S = 0xcbf29ce484222325), cut so that it runs at memory speed
// and on every core: the payload is split into chunks of kParamsChecksumChunkBytes (1 MiB; the
// last one shorter). A chunk of n bytes has eight lanes, lane j starting at S ^ j; its whole
// 64-byte blocks feed lane j their j-th little-endian u64 (lane = (lane ^ word) * P), its last
// n mod 64 bytes feed lane 0 one at a time; its digest is h = S ^ n, then h = (h ^ lane_j) * P
// for j = 0..7. The checksum is h = S, h = (h ^ digest_k) * P for the chunks in order, then
// (h ^ payload bytes) * P. Eight independent multiply chains keep a core busy at the speed the
// payload streams in, and independent chunks let the loader hash on the model's thread pool.
// A change confined to one lane of one chunk always changes the checksum (every step is a
// bijection of the changed value).
//
// The chunk table lets the runtime check each chunk when it is first needed rather than the
// whole payload before the first run (kiln::Model does, kernel_abi.h's "verify" line): at open
// only the table is checked (its digests combine into the header's checksum), and a chunk is
// then sound when it hashes to its table entry. Version 3 had no table, version 2 hashed with
// four lanes and no chunks, version 1 byte by byte; this runtime refuses them all (recompile
// the model). Chosen over CRC-32C for its 64
// bits: the checksum is also the model's fingerprint of its weights (kiln_model_info records
// it), and it needs no table or CPU extension on a board.
#ifndef KILN_PARAMS_H
#define KILN_PARAMS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

inline constexpr char kParamsMagic[8] = {'K', 'I', 'L', 'N', 'P', 'R', 'M', '\0'};
inline constexpr uint32_t kParamsVersion = 4;
inline constexpr std::size_t kParamsHeaderBytes = 64;
// Where ParamsBuilder places tensors, and what the payload's start is aligned to.
inline constexpr std::size_t kParamsAlignment = 64;

class ThreadPool;

// The checksum (above) of `bytes` bytes at `data`.
uint64_t params_checksum(const void* data, std::size_t bytes) noexcept;
inline constexpr uint64_t kParamsChecksumSeed = 0xcbf29ce484222325ull;
inline constexpr std::size_t kParamsChecksumChunkBytes = std::size_t(1) << 20;

// Chunks of a `bytes`-byte payload.
inline constexpr uint64_t params_chunk_count(uint64_t bytes) {
  return (bytes + kParamsChecksumChunkBytes - 1) / kParamsChecksumChunkBytes;
}
// The chunk table of `bytes` bytes at `data` (the digest of each chunk, as the file holds
// them), and the checksum a table of `chunks` entries combines into.
std::vector<uint8_t> params_chunk_table(const void* data, std::size_t bytes);
uint64_t params_checksum_of_table(const uint8_t* table, uint64_t chunks, uint64_t bytes) noexcept;
// The digests of chunks [first, first + count) of `bytes` bytes at `payload`, into `digests`;
// on `pool`'s threads when given.
void params_hash_chunks(const uint8_t* payload, std::size_t bytes, std::size_t first,
                        std::size_t count, uint64_t* digests, ThreadPool* pool);
// The first chunk of [begin, end) that does not hash to its entry of `table`, or `end` when all
// do; on `pool`'s threads when given.
uint64_t params_first_bad_chunk(const uint8_t* payload, uint64_t bytes, const uint8_t* table,
                                uint64_t begin, uint64_t end, ThreadPool* pool);

// A params file image whose header and chunk table were checked.
struct ParamsView {
  const uint8_t* payload = nullptr;  // into the bytes that were checked
  uint64_t bytes = 0;
  uint64_t checksum = 0;
  const uint8_t* chunk_table = nullptr;  // params_chunk_count(bytes) little-endian u64
};

// When parse_params hashes the payload: all of it now, or none (the caller checks each chunk
// before its first use, with params_first_bad_chunk).
enum class ParamsCheck { kWhole, kTableOnly };

// Checks `size` bytes of a params file: magic, version, payload offset, reserved bytes, size,
// the chunk table against the header's checksum, and (kWhole) every chunk against the table,
// on `pool` when given. `name` (a path) only appears in messages. Throws
// RuntimeError(ErrorCode::kParams) saying what is wrong: "not a kiln params file", "unknown
// format version", "truncated", "checksum mismatch" (naming the chunk).
ParamsView parse_params(const void* data, std::size_t size, const std::string& name,
                        ThreadPool* pool = nullptr, ParamsCheck check = ParamsCheck::kWhole);

// "checksum mismatch in chunk K ...": what parse_params throws for a chunk that does not hash
// to its table entry, for callers that check chunks later.
[[noreturn]] void params_chunk_error(const std::string& name, uint64_t chunk);

// The 64-byte header of a params file holding `payload_bytes` bytes with `checksum`.
std::vector<uint8_t> params_header(uint64_t payload_bytes, uint64_t checksum);

// A params file mapped read-only (mmap) and checked with parse_params. Errors name the path:
// RuntimeError(kIo) when it cannot be opened or mapped, RuntimeError(kParams) when it is not a
// valid params file.
class ParamsFile {
 public:
  // `pool` (optional) hashes the payload on its threads. kTableOnly maps without reading the
  // payload (no MAP_POPULATE): its pages come in as they are first checked or used.
  static ParamsFile open(const std::string& path, ThreadPool* pool = nullptr,
                         ParamsCheck check = ParamsCheck::kWhole);

  ParamsFile(ParamsFile&& other) noexcept;
  ParamsFile& operator=(ParamsFile&& other) noexcept;
  ParamsFile(const ParamsFile&) = delete;
  ParamsFile& operator=(const ParamsFile&) = delete;
  ~ParamsFile();

  // 64-byte aligned; valid (non-null) even for an empty payload.
  const void* payload() const { return view_.payload; }
  uint64_t bytes() const { return view_.bytes; }
  uint64_t checksum() const { return view_.checksum; }
  const uint8_t* chunk_table() const { return view_.chunk_table; }
  const std::string& path() const { return path_; }

 private:
  ParamsFile() = default;
  std::string path_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  ParamsView view_;
};

// Writes a params file holding `bytes` bytes of `payload`. The file appears complete or not at
// all: it is written to a temporary file beside `path`, flushed to disk, then renamed over it.
// Throws RuntimeError(kIo) naming the path.
void write_params_file(const std::string& path, const void* payload, std::size_t bytes);

// Lays tensors out in one payload, each at a kParamsAlignment-aligned offset (zero padding
// between), as a model's plan points at them.
class ParamsBuilder {
 public:
  // Appends `bytes` bytes and returns their offset in the payload.
  uint64_t add(const void* data, std::size_t bytes);
  const std::vector<uint8_t>& payload() const { return payload_; }
  uint64_t checksum() const { return params_checksum(payload_.data(), payload_.size()); }
  void write(const std::string& path) const {
    write_params_file(path, payload_.data(), payload_.size());
  }

 private:
  std::vector<uint8_t> payload_;
};

}  // namespace kiln

#endif  // KILN_PARAMS_H
