// The peers kiln is measured against, behind one small interface each so a benchmark row
// can time them side by side with kiln: oneDNN (matmul and convolution in f32, bf16 and int8, weights and
// activations in the layouts it prefers, reordered outside the timed region) and OpenBLAS
// sgemm. Each returns the median (or best, set_peer_best_of) milliseconds of `repeat` runs
// after a warm-up.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::bench {

// Thread counts of both libraries (OpenMP for oneDNN, OpenBLAS's own pool).
void set_peer_threads(int threads);

// What the functions below return of their `repeat` runs: the median (default) or, with
// `best` true, the fastest run, which on a loaded machine is the least disturbed (a run of a
// few milliseconds that straddles a scheduler time slice also counts the other processes').
void set_peer_best_of(bool best);

// The precision of a oneDNN run. bf16: bf16 data and weights (f32 accumulation; matmul
// output f32, conv output bf16). int8: u8 data, s8 weights, u8 output through per-channel
// output scales (u8s8s32 accumulation requantized), as a quantized network's layers run.
enum class PeerPrecision { f32, bf16, int8 };

double onednn_matmul_ms(int64_t m, int64_t n, int64_t k, PeerPrecision prec, int repeat);
// `winograd`: oneDNN's algorithm::convolution_winograd instead of its direct one; -1 when
// oneDNN has no Winograd implementation for the shape on this CPU. Layouts
// `format_tag::any`: what oneDNN prefers, reordered outside the timed region.
double onednn_conv_ms(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh,
                      int64_t kw, int64_t stride, int64_t pad, int64_t groups, int repeat,
                      bool winograd = false, PeerPrecision prec = PeerPrecision::f32);
double openblas_sgemm_ms(int64_t m, int64_t n, int64_t k, int repeat);

// The roofline of a data movement kernel: std::memcpy of `bytes` (split in contiguous halves
// over the peer threads when there are several), warm as kiln's kernels are timed.
double memcpy_ms(int64_t bytes, int repeat);
// oneDNN's reorder of an f32 tensor of shape `in` into its transpose by `perm` (output dim i
// is input dim perm[i], as numpy.transpose): the source described with permuted strides.
double onednn_transpose_ms(const std::vector<int64_t>& in, const std::vector<int64_t>& perm,
                           int repeat);

}  // namespace kiln::bench
