#include "compiler/codegen/link.h"

#include <lld/Common/CommonLinkerContext.h>
#include <lld/Common/Driver.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "compiler/base/error.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/temp_dir.h"

LLD_HAS_DRIVER(elf)

namespace kiln::codegen {
namespace {

namespace fs = std::filesystem;

// lld keeps global state: two links at once crash. Every link in the process takes this.
std::mutex& lld_mutex() {
  static std::mutex m;
  return m;
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  try {
    write_file_bytes(path.string(), bytes.data(), bytes.size());
  } catch (const std::system_error& e) {
    throw Error(e.what());
  }
}

}  // namespace

void link_shared_object(const std::vector<std::vector<uint8_t>>& objects,
                        const std::string& out_path) {
  if (objects.empty()) throw UserError("link " + out_path + ": no objects to link");
  TempDir dir("kiln-link");  // the input objects, removed with everything in it
  std::vector<std::string> inputs;
  for (size_t i = 0; i < objects.size(); ++i) {
    inputs.push_back(dir.file("module" + std::to_string(i) + ".o"));
    write_file(inputs.back(), objects[i]);
  }
  const std::string tmp_out = out_path + ".tmp";
  std::vector<const char*> args{"ld.lld",      "-shared", "--no-undefined", "--build-id=none", "-z",
                                "noexecstack", "-o",      tmp_out.c_str()};
  for (const auto& in : inputs) args.push_back(in.c_str());

  std::string out_text, err_text;
  lld::Result result{};
  {
    std::lock_guard<std::mutex> lock(lld_mutex());
    // Without crash recovery a corrupt input makes lld exit() the whole process.
    static std::once_flag once;
    std::call_once(once, [] { llvm::CrashRecoveryContext::Enable(); });
    llvm::raw_string_ostream out(out_text), err(err_text);
    result = lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
    if (!result.canRunAgain) lld::CommonLinkerContext::destroy();
  }
  std::error_code ec;
  if (result.retCode != 0) {
    fs::remove(tmp_out, ec);
    throw Error("linking " + out_path + " failed: " + (err_text.empty() ? out_text : err_text));
  }
  fs::rename(tmp_out, out_path, ec);
  if (ec) {
    fs::remove(tmp_out, ec);
    throw Error("linking " + out_path + ": cannot rename the output into place: " + ec.message());
  }
}

}  // namespace kiln::codegen
