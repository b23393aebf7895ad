#include "tools/write_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "compiler/base/error.h"

namespace kiln::tools {

void write_file_atomically(const std::string& path, const std::string& text) {
  std::filesystem::path target(path);
  std::string temp =
      (target.parent_path() / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  int fd = mkstemp(temp.data());
  user_check(fd >= 0) << "cannot create a temporary file beside '" << path
                      << "': " << std::strerror(errno);
  const char* p = text.data();
  size_t left = text.size();
  bool ok = fchmod(fd, 0644) == 0;
  while (ok && left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) p += n, left -= static_cast<size_t>(n);
  }
  ok = ok && fsync(fd) == 0;
  int saved = errno;
  ok = close(fd) == 0 && ok;
  ok = ok && rename(temp.c_str(), path.c_str()) == 0;
  if (!ok) {
    saved = saved ? saved : errno;
    unlink(temp.c_str());
    user_error() << "cannot write '" << path << "': " << std::strerror(saved);
  }
}

}  // namespace kiln::tools
