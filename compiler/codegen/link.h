// Linking objects into a loadable shared object with lld, inside this process: no system
// linker and no cross toolchain, so an x86 machine builds AArch64 .so files too. The .so
// has no DT_NEEDED entries and no undefined symbols (`-shared --no-undefined`, no libs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

// Links `objects` (ELF relocatables of one architecture) into `out_path`. The file appears
// complete or not at all (written beside it, then renamed). Throws kiln::Error naming the
// output and quoting lld on failure. Safe to call from several threads (calls are
// serialised: lld is not thread-safe).
void link_shared_object(const std::vector<std::vector<uint8_t>>& objects,
                        const std::string& out_path);

}  // namespace kiln::codegen
