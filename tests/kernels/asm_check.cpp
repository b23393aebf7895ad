#include "tests/kernels/asm_check.h"

#include <sstream>

#include "compiler/codegen/codegen.h"
#include "tuner/builder.h"

namespace kiln::testing {

std::string template_assembly(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                              const std::string& target,
                              const std::map<std::string, int64_t>& knobs) {
  const Target t = target_from_name(target);
  schedules::Config cfg = tpl.fallback(w, t);
  for (const auto& [k, v] : knobs) cfg.set(k, v);
  codegen::CodegenOptions o;
  o.emit_assembly = true;
  return codegen::compile_module({tuner::lower_template(tpl, w, t, cfg, "kernel").func}, t, o)
      .assembly;
}

int count_instructions(const std::string& assembly, const std::string& mnemonic,
                       const std::string& operand) {
  std::istringstream in(assembly);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find_first_not_of(" \t");
    if (at != std::string::npos && line[at] == '{')  // an encoding prefix: {vex} vpdpbusd
      at = line.find_first_not_of(" \t", line.find('}', at) + 1);
    if (at == std::string::npos || line.compare(at, mnemonic.size(), mnemonic) != 0) continue;
    if (line.find(operand) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace kiln::testing
