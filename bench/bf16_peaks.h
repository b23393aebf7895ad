// The bf16 peaks of this CPU for one thread, measured with dependency-free instruction
// loops (no memory traffic): `vdpbf16ps zmm` (AVX512-BF16) and AMX `tdpbf16ps`. The bf16
// table of ops_bench reports kiln's and oneDNN's convolutions as a share of them.
#pragma once

namespace kiln::bench {

// GFLOPS of back-to-back vdpbf16ps zmm on 24 accumulators (64 flops each); 0 without
// avx512bf16.
double vdpbf16ps_peak_gflops();
// GFLOPS of tdpbf16ps on six 16x16 f32 tiles (16*16*32*2 flops each); 0 without AMX or
// when the OS refuses the tile state.
double amx_bf16_peak_gflops();

}  // namespace kiln::bench
