// Private to compiler/codegen. bf16 values that only travel (phis and selects: a padded load
// that the optimiser sank into a join block) moved as 16-bit integers, for x86 targets without
// AVX512-BF16 + VL. The x86 backend legalises a bfloat phi or select by widening it to f32 and
// rounding it back, and that rounding is a call of __truncsfbf2, which a kernel .so cannot link
// (it links against nothing). Moving the bits is exact and needs no conversion at all.
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::codegen {

// Rewrites every phi and select of bfloat (scalar or vector) in `m` into one of the same-sized
// integer type between bitcasts. Returns how many it rewrote.
int move_bf16_phis_as_bits(llvm::Module& m);

}  // namespace kiln::codegen
