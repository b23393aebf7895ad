// Operator templates: the unit of the operator library, as AutoTVM's templates are.
//
// A Workload names one operator instance (op, shape parameters, dtype, fused epilogue).
// An OpTemplate describes, for a workload and a target, a config space of schedule choices,
// a fallback config (a register-blocked, vectorized, parallel heuristic for users who do
// not tune), and for any config of the space the kernel's schedule with the description of
// its arguments (instantiate). Templates describe; they do not lower or compile: one
// builder does that for all of them (tuner/builder.h). A template also gives the reference
// the kernel is checked against, on "logical" tensors (e.g. B as [K, N]); the kernel's own
// argument layout (e.g. B packed in panels) is reached through each argument's `pack`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/target/target.h"
#include "schedules/config.h"
#include "schedules/param.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

struct Workload {
  std::string op;                         // "dense", "conv2d", "relu", ...
  // "M", "N", "K"; "N","C","H","W","O","KH","KW",...; reals such as clip's "lo" and "hi"
  std::map<std::string, Param> params;
  ir::DataType dtype = ir::DataType::f32();
  std::vector<std::string> epilogue;      // fused after the op: "bias", "relu", ...
  // Sizes the kernel takes at run time ("M": a sequence length): their params hold the size
  // its config is chosen (and tuned) for, and the kernel runs any size (run_time_dims.h).
  std::vector<std::string> run_time;
  // The largest value a run-time size takes, where declared (a ranged artifact declares
  // every one): buffers that span the size are sized by it.
  std::map<std::string, int64_t> run_time_max;

  int64_t param(const std::string& name) const;  // UserError when absent or not an integer
  int64_t param_or(const std::string& name, int64_t fallback) const;
  double real(const std::string& name) const;  // an integer converts; UserError when absent
  double real_or(const std::string& name, double fallback) const;
  bool has_epilogue(const std::string& e) const;
  bool at_run_time(const std::string& name) const;
  // "dense M=1 N=1000 K=512 f32 +bias+relu"; "... run-time M N<=512" with run-time sizes
  std::string str() const;
};

// A logical tensor of the workload (what a user and the reference see).
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t elements() const;  // UserError naming the tensor when int64 cannot hold it
};

using Values = std::vector<float>;

struct KernelArg {
  TensorSpec logical;
  bool is_output = false;
  // Kernel layout from the logical one (identity when unset). For a constant such as
  // weights this runs once at compile time; outputs use `unpack` instead.
  std::function<Values(const Values&)> pack;
  std::function<Values(const Values&)> unpack;  // outputs: kernel layout -> logical
  int64_t kernel_elements = 0;                  // elements in the kernel's layout
  // The type of the logical values where packing widens them (int8 weights held as i16
  // pairs): random inputs are drawn in it. Handle: the kernel argument's own type.
  ir::DataType logical_dtype = ir::DataType::handle();
  // Non-empty for the argument that holds the kernel's run-time sizes: these workload
  // params' values, as i64, in order (it has no logical tensor a reference reads).
  std::vector<std::string> run_time_sizes;
};

// A template's kernel for one workload, target and config, ready to lower.
struct ScheduledKernel {
  te::Schedule schedule;
  std::vector<te::Tensor> tensors;  // the kernel's arguments in call order; outputs last
  std::vector<KernelArg> args;      // the same arguments as callers see them
  double flops = 0;
  // The run-time sizes (Workload::run_time, in order) and the argument they are read from.
  std::vector<ir::Var> sizes;
  std::vector<int64_t> size_max;  // Workload::run_time_max of each (0: none)
  te::Tensor sizes_buffer;
};

// The ScheduledKernel whose arguments are `inputs` then `output`, all in their logical layout
// (no pack or unpack). Templates with packed arguments adjust the result.
ScheduledKernel logical_kernel(te::Schedule schedule, std::vector<te::Tensor> tensors,
                               const std::vector<TensorSpec>& inputs, const TensorSpec& output,
                               double flops);

class OpTemplate {
 public:
  virtual ~OpTemplate() = default;
  virtual std::string name() const = 0;  // unique: "dense.packed", "conv2d.nchwc", ...
  virtual std::string op() const = 0;    // the workload op it implements
  // Whether it can build this workload for this target (dtype, features, shape form).
  virtual bool applies(const Workload& w, const Target& t) const = 0;
  virtual ConfigSpace space(const Workload& w, const Target& t) const = 0;
  virtual Config fallback(const Workload& w, const Target& t) const = 0;

  // Checks, with a UserError naming what is wrong, that the workload is this template's op
  // with one of its dtypes() and epilogues() and parameters in range (schedules/validate.h),
  // that check() accepts it for `t`, and that every argument's size fits int64. Front ends
  // call it before asking for a fallback or space; instantiate() always does.
  void validate(const Workload& w, const Target& t) const;
  // The kernel for `cfg`, after validate(w, t) and checking that `cfg` is a config of
  // space(w, t).
  ScheduledKernel instantiate(const Workload& w, const Target& t, const Config& cfg) const;

  // Logical inputs (in call order) and the logical output.
  virtual std::vector<TensorSpec> inputs(const Workload& w) const = 0;
  virtual TensorSpec output(const Workload& w) const = 0;
  // The reference: logical inputs -> logical output, computed in double.
  virtual Values reference(const Workload& w, const std::vector<Values>& inputs) const = 0;

  // What the template accepts: input dtypes (default f32, f16, bf16), names of fused
  // epilogue steps (default none), and parameters that are values rather than sizes, so
  // may be negative (default none).
  virtual std::vector<ir::DataType> dtypes() const;
  // The dtypes the template sweeps of the tests draw: dtypes() unless the template accepts
  // types whose arguments the generic harness cannot generate (cast.flat's integer forms).
  virtual std::vector<ir::DataType> swept_dtypes() const { return dtypes(); }
  virtual std::vector<std::string> epilogues() const { return {}; }
  virtual std::vector<std::string> value_params() const { return {}; }
  // The params a workload may name in `run_time` (default none: every size is compiled in).
  virtual std::vector<std::string> run_time_params() const { return {}; }
  // The factor on the dtype's tolerance (tuner/host_values.h) by which the kernel's output
  // may differ from the reference: 1 for exact algorithms; more where the algorithm itself
  // trades accuracy for speed (Winograd's transforms amplify rounding).
  virtual double tolerance_scale(const Workload&) const { return 1.0; }

 protected:
  // What else the workload must be for `t` (target features, a shape form): UserError
  // otherwise. Runs after the checks of the descriptors above, before the config's.
  virtual void check(const Workload& w, const Target& t) const;
  // The kernel of a workload and config that instantiate() checked.
  virtual ScheduledKernel schedule(const Workload& w, const Target& t,
                                   const Config& cfg) const = 0;
};

inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The template of `op` in a family with one template per op (T constructed from the op name:
// reduce.rows.reduce_sum, arg.rows.arg_max...), each built once; UserError naming `family` and
// its ops for any other op.
template <typename T>
const OpTemplate& family_template(const std::vector<std::string>& ops, const std::string& op,
                                  const std::string& family) {
  static const std::map<std::string, std::unique_ptr<T>> k = [&ops] {
    std::map<std::string, std::unique_ptr<T>> m;
    for (const std::string& o : ops) m[o] = std::make_unique<T>(o);
    return m;
  }();
  auto it = k.find(op);
  if (it == k.end()) {
    std::string valid;
    for (const std::string& o : ops) valid += (valid.empty() ? "" : ", ") + o;
    user_error() << "unknown " << family << " op '" << op << "' (valid: " << valid << ")";
  }
  return *it->second;
}

}  // namespace kiln::schedules
