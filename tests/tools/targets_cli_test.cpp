// `kiln targets` as a user runs it: every preset and profile listed with what it enables, the
// boards by their aliases, and the profile that matches this machine.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/tools/kiln_cli.h"

namespace kiln::tools {
namespace {

using namespace kiln::tools::test;

TEST(TargetsCli, ListsPresetsProfilesAndThisMachine) {
  const Output o = run("targets");
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  for (const char* name :
       {"x86-avx2", "arm-bf16", "host", "znver4", "sapphirerapids", "cortex-a72", "rpi4", "rk3399",
        "graviton3", "LLVM CPU neoverse-v1", "+bf16,+i8mm,-sve", "L1d 64 KiB", "closest profile: "})
    EXPECT_NE(o.text.find(name), std::string::npos) << name << "\n" << o.text;
  EXPECT_NE(o.text.find("2 threads held to the cores of the largest cpu_capacity"),
            std::string::npos)
      << "rk3399's note on its big cores";
  // A name from the list is a --target the other commands take.
  const Output inspect = run("inspect --op dense --shape 8,16,16 --target rpi5 --emit asm");
  EXPECT_EQ(WEXITSTATUS(inspect.status), 0) << inspect.text;
}

}  // namespace
}  // namespace kiln::tools
