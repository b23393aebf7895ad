// A private scratch folder (mkdtemp under the system's temporary directory) that is removed
// with everything in it when the object goes out of scope, whatever happened meanwhile.
// Kernels travel to child processes as files in one of these.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace kiln {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kiln") {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a temporary directory under " + base.string() +
                               ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln
