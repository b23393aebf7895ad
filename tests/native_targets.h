// The named target the tests use for x86's bf16 and int8 dot-product kernels.
#pragma once

namespace kiln::test {

// AVX-512 with AVX512-BF16 and AVX512-VNNI, and no AMX: Cooper Lake's set, which Sapphire
// Rapids and later Xeons and AMD's Zen 4 and 5 also run. The x86-avx512 preset has neither
// dot product on any build machine, so a test names the CPU whose kernels it checks; it runs
// them where this machine has the features and skips otherwise.
inline constexpr const char* kX86Bf16 = "cooperlake";

}  // namespace kiln::test
