#include "tuner/builder.h"

#include "compiler/codegen/build.h"
#include "compiler/codegen/codegen.h"
#include "compiler/base/error.h"
#include "compiler/lower/lower.h"

namespace kiln::tuner {

BuiltKernel lower_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const Target& t, const schedules::Config& cfg,
                           const std::string& kernel_name) {
  schedules::ScheduledKernel s = tpl.instantiate(w, t, cfg);
  internal_check(s.tensors.size() == s.args.size())
      << tpl.name() << ": " << s.tensors.size() << " kernel tensors but " << s.args.size()
      << " argument descriptions";
  BuiltKernel k;
  k.func = lower::lower(s.schedule, s.tensors, kernel_name);
  k.args = std::move(s.args);
  k.flops = s.flops;
  return k;
}

void compile_kernel(const ir::LoweredFunc& func, const Target& t,
                    const std::string& so_path) {
  codegen::build_shared_object({func}, t, so_path);
}

codegen::MachineCodeAnalysis analyze_kernel(const ir::LoweredFunc& func, const Target& t,
                                            size_t max_loops) {
  codegen::CodegenOptions o;
  o.emit_assembly = true;
  o.verbose_assembly = true;  // the analysis tells spills from stack buffers by their comments
  return codegen::analyze_assembly(codegen::compile_module({func}, t, o).assembly, t, max_loops);
}

BuiltKernel build_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const Target& t, const schedules::Config& cfg,
                           const std::string& kernel_name, const std::string& so_path) {
  BuiltKernel k = lower_template(tpl, w, t, cfg, kernel_name);
  compile_kernel(k.func, t, so_path);
  return k;
}

}  // namespace kiln::tuner
