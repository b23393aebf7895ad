// Private to compiler/codegen. bf16 values that only travel moved as 16-bit integers, for x86
// targets without AVX512-BF16 + VL: phis and selects (a padded load that the optimiser sank
// into a join block), shuffles, and masked loads and stores (a transpose's tiles and partial
// tiles). The x86 backend legalises a bfloat phi, select or (on AVX2) shuffle by widening it to
// f32 and rounding it back, and it scalarises a masked store whose mask is not a constant into
// scalar bfloat stores that round the same way. That rounding is a call of __truncsfbf2, which a
// kernel .so cannot link (it links against nothing). Moving the bits is exact and needs no
// conversion at all.
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::codegen {

// Rewrites every phi, select, shuffle, masked load and masked store of bfloat (scalar or vector) in
// `m` into one of the same-sized integer type between bitcasts. Returns how many it rewrote.
int move_bf16_as_bits(llvm::Module& m);

}  // namespace kiln::codegen
