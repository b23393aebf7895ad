// Pooling over NCHW: max and average pooling with kernel/stride/padding/ceil_mode, and
// global average pooling.
//
// Workloads:
//   "max_pool2d", "avg_pool2d": N, C, H, W, KH, KW; SH, SW (default 1); PH, PW (symmetric
//     padding, default 0, at most half the kernel as in ONNX/PyTorch); ceil_mode (0/1);
//     avg_pool2d also count_include_pad (0/1, default 0).
//   "global_avg_pool2d": N, C, H, W -> [N, C, 1, 1].
// dtypes f32, f16, bf16: windows reduce in f32 and the result is stored in the input type.
// With ceil_mode a window may hang past the padded input; like PyTorch it never counts that
// overhang, and count_include_pad counts only the real padding.
#pragma once

#include <cstdint>

#include "compiler/ir/expr.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

struct PoolShape {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  bool ceil_mode = false, count_include_pad = false;
  int64_t out_h() const;
  int64_t out_w() const;
};

// The shape of a max_pool2d / avg_pool2d workload, checked (UserError on bad values).
PoolShape pool_shape(const Workload& w);

// The padded value of a max window: far below any input, but finite, so no inf/nan
// arithmetic appears on the lanes that discard it.
inline constexpr double kMaxPoolPadValue = -3.0e38;

// The number of elements an average window at output (i, j) divides by, as PyTorch defines
// it (see above), as an i32 expression.
ir::Expr avg_pool_window_count(const PoolShape& s, ir::Expr i, ir::Expr j);

// "pool2d.nchw" templates: the window reduces into a vector of output pixels along W kept in
// registers; padding is materialised row by row in a small stack buffer (or inlined as a
// select), and (N*C) planes are spread over threads.
const OpTemplate& max_pool2d_template();
const OpTemplate& avg_pool2d_template();
// "global_avg_pool2d.nchw": each plane sums as `lanes` interleaved partial sums (a manual
// rfactor, so the reduction vectorizes), planes in parallel.
const OpTemplate& global_avg_pool2d_template();

}  // namespace kiln::schedules
