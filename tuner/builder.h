// The builder: the one place where an operator template's schedule becomes a kernel.
// Templates describe (OpTemplate::instantiate gives a schedule and its argument specs);
// this lowers the schedule to loop IR and, when asked, compiles and links it into a shared
// object. Tests, `kiln inspect` and `kiln demo`, the benchmarks and the tuner's local
// measurement all build through here, so they build the same kernel for the same config.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/machine_code_analysis.h"
#include "compiler/ir/lowered_func.h"
#include "compiler/target/target.h"
#include "schedules/op_template.h"

namespace kiln::tuner {

// A lowered kernel with the description of its arguments.
struct BuiltKernel {
  ir::LoweredFunc func;
  std::vector<schedules::KernelArg> args;  // in call order; outputs last
  double flops = 0;
  // The values of the run-time sizes the flops count (Workload::run_time order).
  std::vector<int64_t> flops_sizes;
};

// Instantiates `tpl` for the workload, target and config (UserError when any is invalid)
// and lowers its schedule into the function `kernel_name`.
BuiltKernel lower_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const Target& t, const schedules::Config& cfg,
                           const std::string& kernel_name);

// A kernel that takes sizes at run time (Workload::run_time), described at the sizes of `w`:
// the same code, with each argument's logical shape and element count at those sizes, so it
// can be run and checked there. `w` must differ from the kernel's workload only in the
// run-time params' values; a packed argument (weights) must not depend on them.
BuiltKernel at_sizes(const BuiltKernel& k, const schedules::OpTemplate& tpl,
                     const schedules::Workload& w);

// The kernel's body with its run-time sizes replaced by their values in `w` (the kernel's
// own workload, or one at_sizes accepts): what the cost model reads, so that its loop
// statistics count the iterations at the size the kernel is measured at. A kernel without
// run-time sizes comes back as it is.
ir::LoweredFunc with_sizes_of(const BuiltKernel& k, const schedules::Workload& w);

// Compiles a lowered kernel alone for `t` and links it into the shared object `so_path`
// (LLVM codegen, then the in-process link: no toolchain needed, AArch64 included).
void compile_kernel(const ir::LoweredFunc& func, const Target& t,
                    const std::string& so_path);

// The lowered kernel's innermost loops as llvm-mca predicts them on `t`'s CPU model
// (compiler/codegen/machine_code_analysis.h): what `kiln inspect --analyze` prints.
// `max_loops`: how many innermost loops, the micro-kernel first.
codegen::MachineCodeAnalysis analyze_kernel(const ir::LoweredFunc& func, const Target& t,
                                            size_t max_loops = 3);

// lower_template, then compile_kernel into `so_path`.
BuiltKernel build_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const Target& t, const schedules::Config& cfg,
                           const std::string& kernel_name, const std::string& so_path);

}  // namespace kiln::tuner
