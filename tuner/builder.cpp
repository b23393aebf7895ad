#include "tuner/builder.h"

#include "compiler/base/error.h"
#include "compiler/codegen/build.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"
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
  k.func =
      lower::lower(s.schedule, s.tensors, kernel_name, {}, {s.sizes_buffer, s.sizes, s.size_max});
  k.args = std::move(s.args);
  k.flops = s.flops;
  for (const std::string& d : w.run_time) k.flops_sizes.push_back(w.param(d));
  return k;
}

BuiltKernel at_sizes(const BuiltKernel& k, const schedules::OpTemplate& tpl,
                     const schedules::Workload& w) {
  std::vector<schedules::TensorSpec> specs = tpl.inputs(w);
  specs.push_back(tpl.output(w));
  const bool sized = !k.args.empty() && !k.args.front().run_time_sizes.empty();
  user_check(sized && k.args.size() == specs.size() + 1)
      << "kernel " << k.func.name << " takes no run-time sizes of " << w.str();
  user_check(k.args.front().run_time_sizes == w.run_time)
      << "kernel " << k.func.name << " takes other run-time sizes than " << w.str();
  for (const auto& [d, max] : w.run_time_max)
    user_check(w.param(d) <= max) << "kernel " << k.func.name << " takes " << d << " up to " << max
                                  << ", not " << w.param(d);
  BuiltKernel out = k;
  // Every template's work grows in proportion to each size it takes at run time.
  for (size_t i = 0; i < w.run_time.size() && i < k.flops_sizes.size(); ++i) {
    out.flops_sizes[i] = w.param(w.run_time[i]);
    out.flops *= static_cast<double>(out.flops_sizes[i]) / static_cast<double>(k.flops_sizes[i]);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    schedules::KernelArg& a = out.args[i + 1];
    const bool laid_out = a.is_output ? static_cast<bool>(a.unpack) : static_cast<bool>(a.pack);
    if (laid_out) {
      user_check(a.logical.shape == specs[i].shape)
          << "kernel " << k.func.name << ": argument " << a.logical.name
          << " is packed, so it cannot change with the run-time sizes of " << w.str();
      continue;
    }
    a.logical = specs[i];
    a.kernel_elements = specs[i].elements();
  }
  return out;
}

ir::LoweredFunc with_sizes_of(const BuiltKernel& k, const schedules::Workload& w) {
  ir::LoweredFunc f = k.func;
  if (k.args.empty() || k.args.front().run_time_sizes.empty()) return f;
  // lower() reads each size with a `let` at the top of the body, in the argument's order.
  const std::vector<std::string>& names = k.args.front().run_time_sizes;
  ir::Stmt body = f.body;
  for (const std::string& name : names) {
    const auto* let = body.as<ir::LetStmtNode>();
    internal_check(let != nullptr)
        << "kernel " << f.name << " does not read its " << names.size() << " run-time sizes first";
    body = ir::substitute(let->body, let->var, ir::Expr(w.param(name)));
  }
  f.body = ir::simplify(body);
  return f;
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
