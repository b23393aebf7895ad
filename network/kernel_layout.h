// The layout a kernel expects of each activation argument. Templates describe their
// arguments by logical spec plus pack/unpack functions (op_template.h); the blocked conv2d
// templates read and write activations as NCHW[x]c. The network compiler must make each
// producer write what its consumers read, so it needs the block size: found here by checking
// the argument's pack (or unpack) against the NCHW[x]c layout of each candidate block on a
// probe tensor, which holds for any template without it having to say so.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::network {

// 0: the logical (row-major) layout; b > 0: NCHW[b]c of the logical [N, C, H, W].
using Layout = int64_t;
// A model input or output of type bool, int32 or int64, held in its own type (row-major) as
// the caller passes it; kernels read and write every value in f32 (op_table.h: holds_dtype).
inline constexpr Layout kModelDtype = -2;

// The layout of a non-constant argument. UserError naming the template when the argument
// is packed in a layout other than NCHW[x]c (the network compiler cannot feed it).
Layout activation_layout(const schedules::KernelArg& arg, const std::string& template_name);

// Elements of a logical [N, C, H, W] tensor in `layout`.
int64_t layout_elements(const std::vector<int64_t>& logical, Layout layout);

}  // namespace kiln::network
