// A whole file read into memory, or written from it, as bytes: the one helper for it outside
// the deployable runtime (the farm, the tools, the network compiler, code generation, the
// tests). POSIX calls only, so the failure's errno is known and named.
//
//   read_file_bytes(path)            the file's bytes; throws when it cannot be read
//   read_file_bytes_or_empty(path)   the same, or nothing when it cannot be read (a child's
//                                    log or output that may not be there)
//   write_file_bytes(path, bytes)    creates or truncates the file; throws when it cannot
//
// The readers return a std::string, or any container of bytes asked for:
// read_file_bytes<std::vector<uint8_t>>(path). The errors are std::system_error (a
// std::runtime_error) whose message is "cannot read 'PATH': REASON" or "cannot write
// 'PATH': REASON"; code() is the errno, for a caller that words its own message.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

namespace kiln {

namespace file_bytes_detail {

// Reads all of `path` into `out`: 0, or the errno of the open or read that failed (`out` is
// then empty).
template <typename Bytes>
int read_into(const std::string& path, Bytes& out) {
  static_assert(sizeof(typename Bytes::value_type) == 1, "a container of bytes");
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  // A regular file's size, plus one so that the read that sees its end needs no more room;
  // files that do not know their size (/proc, pipes) grow by doubling.
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  out.resize(sized ? static_cast<std::size_t>(st.st_size) + 1 : 4096);
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) out.resize(out.size() * 2);
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(out.data()) + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      out.clear();
      return err;
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(have);
  return 0;
}

}  // namespace file_bytes_detail

// The bytes of the file at `path`; std::system_error "cannot read 'PATH': REASON" when it
// cannot be opened or read (a directory included).
template <typename Bytes = std::string>
Bytes read_file_bytes(const std::string& path) {
  Bytes out;
  if (const int err = file_bytes_detail::read_into(path, out))
    throw std::system_error(err, std::generic_category(), "cannot read '" + path + "'");
  return out;
}

// The bytes of the file at `path`, or an empty container when it cannot be opened or read.
template <typename Bytes = std::string>
Bytes read_file_bytes_or_empty(const std::string& path) {
  Bytes out;
  file_bytes_detail::read_into(path, out);
  return out;
}

// Writes `size` bytes at `data` as the whole of the file at `path` (created with mode 0666
// less the umask, or truncated); std::system_error "cannot write 'PATH': REASON" when it
// cannot.
inline void write_file_bytes(const std::string& path, const void* data, std::size_t size) {
  const auto fail = [&](int err) {
    throw std::system_error(err, std::generic_category(), "cannot write '" + path + "'");
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(errno);
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail(err);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  // Where the file system reports a failed write only at close (NFS, a full disk).
  if (::close(fd) != 0 && errno != EINTR) fail(errno);
}

inline void write_file_bytes(const std::string& path, std::string_view bytes) {
  write_file_bytes(path, bytes.data(), bytes.size());
}

}  // namespace kiln
