// archive.h through llvm::writeArchiveToBuffer: it reads each member's symbol table to build
// the index a linker needs to pull members out of the archive.
#include "compiler/codegen/archive.h"

#include <llvm/Object/ArchiveWriter.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdio>
#include <system_error>
#include <unistd.h>

#include "compiler/base/error.h"
#include "runtime/process/file_bytes.h"

namespace kiln::codegen {

void write_static_archive(const std::vector<ArchiveMember>& members, const std::string& out_path) {
  std::vector<llvm::NewArchiveMember> list;
  for (const ArchiveMember& m : members) {
    llvm::StringRef bytes(reinterpret_cast<const char*>(m.object.data()), m.object.size());
    list.emplace_back(llvm::MemoryBufferRef(bytes, m.name));
    list.back().MemberName = m.name;
  }
  std::string warnings;
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> archive = llvm::writeArchiveToBuffer(
      list, llvm::SymtabWritingMode::NormalSymtab, llvm::object::Archive::K_GNU,
      /*Deterministic=*/true, /*Thin=*/false,
      [&](llvm::Error e) { warnings += llvm::toString(std::move(e)); });
  if (!archive) {
    internal_error() << "cannot write the archive " << out_path << ": "
                     << llvm::toString(archive.takeError());
  }
  internal_check(warnings.empty()) << "archive " << out_path << ": " << warnings;

  const std::string temp = out_path + ".tmp." + std::to_string(::getpid());
  try {
    write_file_bytes(temp, (*archive)->getBufferStart(), (*archive)->getBufferSize());
  } catch (const std::system_error& e) {
    std::remove(temp.c_str());
    user_error() << "cannot write " << out_path << ": " << e.code().message();
  }
  if (std::rename(temp.c_str(), out_path.c_str()) != 0) {
    std::remove(temp.c_str());
    user_error() << "cannot write " << out_path << " (rename failed)";
  }
}

}  // namespace kiln::codegen
