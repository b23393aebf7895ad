// Private to compiler/codegen. Broadcasts of neighbouring values as lanes of one load, for
// AArch64. A half-precision micro-kernel multiplies a vector of output channels by one input
// value at a time, and each such broadcast is a scalar load and a splat, which the backend
// emits as `ld1r`. On Neoverse-N1-class cores `ld1r` takes a slot of the vector pipe the
// `fmla .8h` need (llvm-mca's model: 2 of 6 busy cycles in a 2 x 4 tile). When the loop over
// input channels is unrolled, the values of one pixel are neighbours: one vector load brings
// them all, and `fmla v.8h, v.8h, v.h[i]` takes each as a lane, with no broadcast left.
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::codegen {

// The same holds for the 32-bit groups that the bf16 (BFDOT, a pair) and int8 (SDOT/UDOT, a
// quad) kernels broadcast: `bfdot v.4s, v.8h, v.2h[i]` takes one as a lane.
//
// In every basic block of `m`: splats of scalar f16 or i32 loads whose addresses are a q
// register's worth of neighbouring elements (8 halves, 4 words) or a d register's (all of
// them, so that the vector load reads only what the scalar loads read), with nothing between
// them that writes memory, become one vector load and lane splats. Returns how many groups it
// rewrote.
int broadcast_loads_by_lane(llvm::Module& m);

}  // namespace kiln::codegen
