// Params files: the header check, the read-only mapping, and the writer
// (temporary file, fsync, rename). Plain POSIX I/O, no iostreams: this is part of the tiny
// runtime.
#include "kiln/params.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "kiln/runtime.h"
#include "message.h"

namespace kiln {
namespace {

// Header field offsets (see params.h).
constexpr std::size_t kVersionAt = 8, kOffsetAt = 12, kBytesAt = 16, kChecksumAt = 24,
                      kReservedAt = 32;

uint32_t read_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t read_u64(const uint8_t* p) {
  return uint64_t(read_u32(p)) | uint64_t(read_u32(p + 4)) << 32;
}
void write_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void write_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// "kiln: params file 'NAME': " and then `what`.
[[noreturn]] void params_error(const std::string& name,
                               std::initializer_list<std::string_view> what) {
  throw_error(ErrorCode::kParams, {"kiln: params file '", name, "': ", concat(what)});
}

[[noreturn]] void io_error(const std::string& path, const char* doing) {
  throw_error(ErrorCode::kIo, {"kiln: cannot ", doing, " '", path, "': ", std::strerror(errno)});
}

// Writes all of [data, data + size) to fd, retrying short writes and EINTR.
bool write_all(int fd, const uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

uint64_t params_first_bad_chunk(const uint8_t* payload, uint64_t bytes, const uint8_t* table,
                                uint64_t begin, uint64_t end, ThreadPool* pool) {
  // In batches, so that a large payload needs no large buffer and a bad chunk early in a
  // range is reported without hashing the rest.
  constexpr std::size_t kBatch = 64;
  uint64_t digests[kBatch];
  for (uint64_t first = begin; first < end; first += kBatch) {
    const std::size_t count = static_cast<std::size_t>(std::min<uint64_t>(kBatch, end - first));
    params_hash_chunks(payload, bytes, first, count, digests, pool);
    for (std::size_t k = 0; k < count; ++k)
      if (digests[k] != read_u64(table + 8 * (first + k))) return first + k;
  }
  return end;
}

void params_chunk_error(const std::string& name, uint64_t chunk) {
  params_error(name, {"checksum mismatch in chunk ", Num(chunk),
                      " (the payload's MiB at that index does not hash to its entry of the chunk "
                      "table: the file is corrupt)"});
}

ParamsView parse_params(const void* data, std::size_t size, const std::string& name,
                        ThreadPool* pool, ParamsCheck check) {
  const auto* p = static_cast<const uint8_t*>(data);
  // A file that starts like a params file but stops early is truncated; anything else that
  // does not start with the magic is some other file.
  if (size == 0) params_error(name, {"truncated: the file is empty"});
  const std::size_t magic_seen = size < sizeof kParamsMagic ? size : sizeof kParamsMagic;
  if (std::memcmp(p, kParamsMagic, magic_seen) != 0)
    params_error(name, {"not a kiln params file (no KILNPRM magic)"});
  if (size < kParamsHeaderBytes) {
    params_error(name, {"truncated: ", Num(size), " bytes, shorter than the ",
                        Num(kParamsHeaderBytes), "-byte header"});
  }
  const uint32_t version = read_u32(p + kVersionAt);
  if (version != kParamsVersion) {
    params_error(name, {"unknown format version ", Num(version), " (this runtime reads version ",
                        Num(kParamsVersion),
                        version < kParamsVersion ? "; recompile the model with this kiln)" : ")"});
  }
  const uint32_t offset = read_u32(p + kOffsetAt);
  if (offset != kParamsHeaderBytes) {
    params_error(name, {"payload offset ", Num(offset), " is invalid (version 4 has ",
                        Num(kParamsHeaderBytes), ")"});
  }
  for (std::size_t i = kReservedAt; i < kParamsHeaderBytes; ++i) {
    if (p[i] != 0) params_error(name, {"reserved header byte ", Num(i), " is not zero"});
  }
  const uint64_t bytes = read_u64(p + kBytesAt);
  const uint64_t have = size - kParamsHeaderBytes;
  const uint64_t chunks = params_chunk_count(bytes);
  const uint64_t table_bytes = 8 * chunks;  // bytes < 2^64, so under 2^48: no overflow
  if (bytes > have || have - bytes != table_bytes) {
    const bool short_file = bytes > have || have - bytes < table_bytes;
    params_error(name, {short_file ? "truncated: " : "size mismatch: ", Num(size),
                        " bytes, the header says ", Num(kParamsHeaderBytes), " + ", Num(bytes),
                        " + a ", Num(table_bytes), "-byte chunk table"});
  }
  const uint8_t* payload = p + kParamsHeaderBytes;
  const uint8_t* table = payload + bytes;
  const uint64_t recorded = read_u64(p + kChecksumAt);
  const uint64_t of_table = params_checksum_of_table(table, chunks, bytes);
  if (recorded != of_table) {
    params_error(name, {"checksum mismatch: the chunk table does not combine to the header's "
                        "checksum (the file is corrupt)"});
  }
  if (check == ParamsCheck::kWhole) {
    const uint64_t bad = params_first_bad_chunk(payload, bytes, table, 0, chunks, pool);
    if (bad != chunks) params_chunk_error(name, bad);
  }
  return {payload, bytes, recorded, table};
}

std::vector<uint8_t> params_header(uint64_t payload_bytes, uint64_t checksum) {
  std::vector<uint8_t> h(kParamsHeaderBytes, 0);
  std::memcpy(h.data(), kParamsMagic, sizeof kParamsMagic);
  write_u32(h.data() + kVersionAt, kParamsVersion);
  write_u32(h.data() + kOffsetAt, kParamsHeaderBytes);
  write_u64(h.data() + kBytesAt, payload_bytes);
  write_u64(h.data() + kChecksumAt, checksum);
  return h;
}


ParamsFile ParamsFile::open(const std::string& path, ThreadPool* pool, ParamsCheck check) {
  ParamsFile f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error(path, "open params file");
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    io_error(path, "stat params file");
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size > 0) {
    // Read-only and private: the weights are shared with the page cache, never copied, and a
    // kernel that tried to write them would fault instead of corrupting them silently.
    // MAP_POPULATE when the whole payload is hashed now: it reads every page anyway, and
    // faulting them in one call is much cheaper than one page fault per 4 KiB. Checked chunk by
    // chunk later, the pages come in as the chunks are.
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (check == ParamsCheck::kWhole) flags |= MAP_POPULATE;
#endif
    void* map = mmap(nullptr, size, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      errno = e;
      io_error(path, "map params file");
    }
    f.map_ = map;
    f.map_size_ = size;
  }
  ::close(fd);  // the mapping keeps the file
  static const uint8_t kEmpty = 0;
  f.view_ = parse_params(f.map_ ? f.map_ : &kEmpty, size, path, pool, check);  // ~ParamsFile unmaps on throw
  return f;
}

ParamsFile::ParamsFile(ParamsFile&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      view_(std::exchange(other.view_, {})) {}

ParamsFile& ParamsFile::operator=(ParamsFile&& other) noexcept {
  if (this != &other) {
    if (map_) munmap(map_, map_size_);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    view_ = std::exchange(other.view_, {});
  }
  return *this;
}

ParamsFile::~ParamsFile() {
  if (map_) munmap(map_, map_size_);
}

void write_params_file(const std::string& path, const void* payload, std::size_t bytes) {
  const std::vector<uint8_t> table = params_chunk_table(payload, bytes);
  const std::vector<uint8_t> header =
      params_header(bytes, params_checksum_of_table(table.data(), table.size() / 8, bytes));
  // Beside the destination, so that the rename stays within one file system (and is atomic).
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) io_error(path, "create a temporary file for");
  fchmod(fd, 0644);  // mkstemp's 0600 would hide the weights from the user who runs the model
  const bool ok = write_all(fd, header.data(), header.size()) &&
                  write_all(fd, static_cast<const uint8_t*>(payload), bytes) &&
                  write_all(fd, table.data(), table.size()) && fsync(fd) == 0;
  const int write_errno = errno;
  if (::close(fd) != 0 || !ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : write_errno;
    ::unlink(temp.c_str());
    errno = e;
    io_error(path, "write params file");
  }
}

uint64_t ParamsBuilder::add(const void* data, std::size_t bytes) {
  const std::size_t offset =
      (payload_.size() + kParamsAlignment - 1) / kParamsAlignment * kParamsAlignment;
  payload_.resize(offset + bytes, 0);
  if (bytes > 0) std::memcpy(payload_.data() + offset, data, bytes);
  return offset;
}

}  // namespace kiln
