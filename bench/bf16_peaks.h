// The low-precision peaks of this CPU for one thread, measured with dependency-free
// instruction loops (no memory traffic): `vdpbf16ps zmm` (AVX512-BF16), AMX `tdpbf16ps` and
// `vpdpbusd zmm` (AVX512-VNNI). The bf16 and int8 tables of ops_bench report kiln's and
// oneDNN's kernels as a share of them.
#pragma once

namespace kiln::bench {

// GFLOPS of back-to-back vdpbf16ps zmm on 24 accumulators (64 flops each); 0 without
// avx512bf16.
double vdpbf16ps_peak_gflops();
// GFLOPS of tdpbf16ps on six 16x16 f32 tiles (16*16*32*2 flops each); 0 without AMX or
// when the OS refuses the tile state.
double amx_bf16_peak_gflops();
// GOPS (2 per multiply-add) of back-to-back vpdpbusd zmm on 24 accumulators (64
// multiply-adds each); 0 without avx512vnni.
double vpdpbusd_peak_gops();

}  // namespace kiln::bench
