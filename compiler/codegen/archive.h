// Static libraries (`ar` archives with a symbol index) of kiln's objects, written with LLVM's
// archive writer inside this process: `kiln compile` makes model.a for any target with no
// binutils or cross toolchain installed, as link.h makes the .so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

struct ArchiveMember {
  std::string name;             // e.g. "model.o"
  std::vector<uint8_t> object;  // an ELF relocatable object
};

// Writes a GNU-format archive of `members` (deterministic: zero dates and owners, so the same
// compile gives the same bytes) to `out_path`, complete or not at all (a temporary file beside
// it, renamed). Throws UserError naming the path when it cannot be written, InternalError when
// LLVM rejects a member.
void write_static_archive(const std::vector<ArchiveMember>& members, const std::string& out_path);

}  // namespace kiln::codegen
