// Small helpers the test suites share: a file's text, a file written whole, an inode, a PID
// no process has, the temporaries a folder replacement leaves beside a folder, and the message
// of a UserError.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "runtime/process/file_bytes.h"

namespace kiln::test {

// The file's bytes, or "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
  return read_file_bytes_or_empty(p.string());
}

// Throws (std::system_error naming the path) when the file cannot be written.
inline void write_file(const std::filesystem::path& p, const std::string& text) {
  write_file_bytes(p.string(), text);
}

inline ino_t inode(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

// A PID that no process has: a child's, once it has exited and been reaped.
inline pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// The entries of `parent` whose names start with ".NAME.TAG": the temporaries that
// replace_folder (compiler/base/output_paths.h) builds the folder NAME in.
inline std::vector<std::string> temporaries(const std::filesystem::path& parent,
                                            const std::string& name,
                                            const std::string& tag = "kiln-compile") {
  std::vector<std::string> out;
  const std::string prefix = "." + name + "." + tag;
  for (const auto& e : std::filesystem::directory_iterator(parent))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().filename());
  return out;
}

// The message of the UserError that `f` throws, or "" (and a test failure) if it throws none.
template <typename F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a kiln::UserError";
  return "";
}

}  // namespace kiln::test
