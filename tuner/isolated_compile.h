// A compile with a hard deadline: LLVM code generation of one lowered kernel in a forked
// child process, SIGKILLed when the deadline passes. A thread cannot be interrupted, and a
// candidate whose LLVM optimisation runs for minutes (a huge unrolled body) would otherwise
// hold a builder thread for as long; an LLVM abort ("Cannot select", an assertion) takes only
// the child down. The child only emits the object and sends it back through a pipe: the
// link happens here, because lld is serialised by a process-wide mutex that another builder
// thread may hold at the moment of the fork (a child would wait on it for ever).
#pragma once

#include <string>

#include "compiler/ir/lowered_func.h"
#include "compiler/target/target.h"
#include "tuner/builder.h"
#include "tuner/measure_result.h"

namespace kiln::tuner {

struct IsolatedCompile {
  MeasureErrorKind error = MeasureErrorKind::Ok;  // Ok, CompileError or CompileTimeout
  std::string message;                            // why not, when not Ok
};

// Compiles `func` for `t` in a child process and links it into `so_path`. Never throws for a
// failing compile: a compile error, a crash of the compiler and a compile still running after
// `timeout_s` seconds come back as their kind (the child is then killed and reaped).
IsolatedCompile compile_isolated(const ir::LoweredFunc& func, const Target& t,
                                 const std::string& so_path, double timeout_s);

// `kiln tune --runner analyze`: the kernel's time predicted (tuner/predict.h) in a child
// process the same way, `*cycles` per call set when Ok. A kernel that cannot be predicted (no
// multiply-accumulate loop) comes back as a CompileError naming why.
IsolatedCompile predict_isolated(const BuiltKernel& k, const Target& t, double timeout_s,
                                 double* cycles);

}  // namespace kiln::tuner
