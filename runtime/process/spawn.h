// Starting a child process, the one way kiln does it: no shell, posix_spawnp (the program is
// looked up on PATH), stdin from /dev/null, no blocked signals. Two kinds of child:
//  - spawn_in_own_group: what the kernel runner and the farm sandbox need: in a process group
//    of its own (a timeout then kills the child's children too, such as qemu's), stdout and
//    stderr into files of their own;
//  - spawn_with_log: a long-lived helper process (the local farm's tracker and workers):
//    stdout and stderr appended to one log file, variables added to its environment, and in
//    this process's group, so that a terminal's Ctrl-C reaches it as it reaches us.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {

namespace spawn_detail {

struct FileActions {
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t actions;
};

// posix_spawnp of `argv` with `files` (the child's stdout and stderr), in a process group of
// its own when `own_group`, with this process's environment and `extra_env` ("NAME=value", set
// over a variable of the same name). Returns the child's pid; throws naming the program.
inline pid_t spawn(const std::vector<std::string>& argv, FileActions& files, bool own_group,
                   const std::vector<std::string>& extra_env) {
  if (argv.empty()) throw std::runtime_error("cannot start a program: the command is empty");
  posix_spawn_file_actions_addopen(&files.actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> envp;
  if (!extra_env.empty()) {
    const auto name_of = [](const char* e) { return std::string(e, std::strcspn(e, "=")); };
    for (char** e = environ; *e; ++e) {
      bool replaced = false;
      for (const auto& x : extra_env) replaced = replaced || name_of(x.c_str()) == name_of(*e);
      if (!replaced) envp.push_back(*e);
    }
    for (const auto& x : extra_env) envp.push_back(const_cast<char*>(x.c_str()));
    envp.push_back(nullptr);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, (own_group ? POSIX_SPAWN_SETPGROUP : 0) | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &files.actions, &attr, cargv.data(),
                              extra_env.empty() ? environ : envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(rc));
  return pid;
}

}  // namespace spawn_detail

// Returns the child's pid (its process group id too); throws naming the program on failure.
inline pid_t spawn_in_own_group(const std::vector<std::string>& argv, const std::string& stdout_path,
                                const std::string& stderr_path) {
  spawn_detail::FileActions files;
  posix_spawn_file_actions_addopen(&files.actions, 1, stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&files.actions, 2, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  return spawn_detail::spawn(argv, files, /*own_group=*/true, {});
}

// Returns the child's pid; the child stays in this process's group. `log_path` is created
// (mode 0644 less the umask) or appended to; `extra_env` holds "NAME=value" entries.
inline pid_t spawn_with_log(const std::vector<std::string>& argv, const std::string& log_path,
                            const std::vector<std::string>& extra_env = {}) {
  spawn_detail::FileActions files;
  posix_spawn_file_actions_addopen(&files.actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&files.actions, 1, 2);
  return spawn_detail::spawn(argv, files, /*own_group=*/false, extra_env);
}

}  // namespace kiln
