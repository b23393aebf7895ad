// For farm processes that another program started for its own use (the embedded farm of
// `kiln tune`): with KILN_EXIT_WITH_PARENT=1 in the environment, the process gets SIGTERM
// when its parent dies, even by SIGKILL, so a killed tuning run leaves no tracker or worker
// behind. Without the variable nothing changes (a farm started by hand outlives its shell).
#ifndef KILN_RPC_FARM_PARENT_WATCH_H
#define KILN_RPC_FARM_PARENT_WATCH_H

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace kiln::farm {

inline void exit_with_parent_if_asked() {
  const char* v = std::getenv("KILN_EXIT_WITH_PARENT");
  if (!v || std::strcmp(v, "1") != 0) return;
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) raise(SIGTERM);  // the parent died before the watch was set
}

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_PARENT_WATCH_H
