#include "compiler/codegen/build.h"

#include "compiler/codegen/link.h"

namespace kiln::codegen {

CompiledModule build_shared_object(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                                   const std::string& out_path, const CodegenOptions& options) {
  CompiledModule m = compile_module(funcs, target, options);
  link_shared_object({m.object}, out_path);
  return m;
}

}  // namespace kiln::codegen
