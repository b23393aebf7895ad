// Running the real `kiln` binary (KILN_BIN) from a test: its exit status and everything it
// printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kiln::network::test {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

inline Output kiln(const std::string& args) {
  Output o;
  std::FILE* p = popen((std::string(KILN_BIN) + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) o.text += buf.data();
  o.status = WEXITSTATUS(pclose(p));
  return o;
}

}  // namespace kiln::network::test
