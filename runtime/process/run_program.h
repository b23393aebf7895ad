// Running a program to completion with its output captured: what tests do with the programs
// they build or the CLI they check (model_app, a statically linked board program, `kiln run`).
#pragma once

#include <sys/wait.h>

#include <cerrno>
#include <string>
#include <vector>

#include "runtime/process/file_bytes.h"
#include "runtime/process/spawn.h"

namespace kiln {

struct ProgramRun {
  int status = -1;  // the exit status, or -1 when a signal killed it
  std::string out;  // stdout, then stderr
};

// Runs `argv` (no shell) and waits for it; its stdout and stderr go through the files
// DIR/stdout.txt and DIR/stderr.txt.
inline ProgramRun run_program(const std::vector<std::string>& argv, const std::string& dir) {
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  const pid_t pid = spawn_in_own_group(argv, out, err);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          read_file_bytes_or_empty(out) + read_file_bytes_or_empty(err)};
}

}  // namespace kiln
