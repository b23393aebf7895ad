// Codegen's view of "host": the runtime's CPU probe and LLVM's host detection must agree on
// every feature the probe knows, or kernels compiled for "host" could use instructions the
// runtime's load-time check thinks are missing (or the other way round).
#include <gtest/gtest.h>

#include "compiler/codegen/codegen.h"
#include "kiln/cpu_features.h"

namespace kiln::codegen {
namespace {

TEST(LlvmTarget, HostResolvesToThisCpu) {
  Target host = host_target();
  Target llvm = llvm_target(host);
  EXPECT_NE(llvm.cpu, "host");
  EXPECT_FALSE(llvm.cpu.empty());
  for (const std::string& f : cpu_known_features())
    EXPECT_EQ(llvm.has(f), cpu_has(f)) << "LLVM and the CPU probe disagree on " << f;
}

TEST(LlvmTarget, PresetsAreUnchanged) {
  Target avx2 = target_from_name("x86-avx2");
  Target llvm = llvm_target(avx2);
  EXPECT_EQ(llvm.cpu, avx2.cpu);
  EXPECT_EQ(llvm.features, avx2.features);
}

}  // namespace
}  // namespace kiln::codegen
