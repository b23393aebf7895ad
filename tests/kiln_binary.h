// Running the real `kiln` binary (KILN_BIN) from a test as a user runs it: what it printed
// (stdout and stderr) and how it ended.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kiln::test {

struct KilnOutput {
  int status = -1;   // as waitpid reports it
  std::string text;  // stdout and stderr
  // The exit code, or -1 when the process did not exit (a signal).
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

inline KilnOutput run_kiln(const std::string& args) {
  KilnOutput o;
  std::FILE* p = popen((std::string(KILN_BIN) + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) o.text += buf.data();
  o.status = pclose(p);
  return o;
}

}  // namespace kiln::test
