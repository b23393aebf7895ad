// Lowering: schedule -> loop IR ready for codegen. lower.cpp lists every pass in order,
// with the reason it sits where it does; `after_pass` (or KILN_DUMP_IR=1 in the
// environment) shows the IR after each named pass, and `verify_each_pass` (or
// KILN_VERIFY_IR=1) checks it after each, so a pass that breaks the IR is named.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/lowered_func.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

struct LowerOptions {
  // Called with each pass name and the IR after it.
  std::function<void(const std::string& pass, const ir::Stmt& body)> after_pass;
  // Runs the IR verifier after every pass (with the checks that apply at that stage), not
  // only on the final IR: an InternalError then names the pass that broke an invariant.
  // KILN_VERIFY_IR=1 in the environment switches it on too; test harnesses switch it on.
  bool verify_each_pass = false;
  // For tests of the checking itself: replaces the IR a pass produced, before it is shown or
  // verified, as if that pass had produced the replacement (a planted broken pass).
  std::function<ir::Stmt(const std::string& pass, const ir::Stmt& body)> replace_after_pass;
};

// Sizes a kernel takes at run time (a sequence length, an image width): the variables that
// its shapes and loop extents use where a constant would stand. The kernel reads them at its
// start from `buffer`, one of its arguments: an i64 tensor of one value per variable, in
// order. Loops split by constant factors then run a guard-free main part of an extent
// computed from the sizes, and a guarded tail (loop_partition.h).
struct RunTimeSizes {
  te::Tensor buffer;
  std::vector<ir::Var> vars;
  // The largest value of each (0: none declared). A region computed inside a loop that spans
  // a size with a maximum gets a buffer of that size; without one it is an error.
  std::vector<int64_t> max;
};

// `args` are the kernel's buffers in call order: every input it reads and every output,
// and the sizes' buffer when it takes any.
ir::LoweredFunc lower(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const std::string& name, const LowerOptions& options = {},
                      const RunTimeSizes& sizes = {});

// The pass names in order, for documentation and `--dump-after`.
const std::vector<std::string>& pass_names();

}  // namespace kiln::lower
