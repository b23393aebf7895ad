// Sliding-window geometry shared by Conv and the pooling operators: kernel, strides,
// dilations and padding (explicit or auto_pad SAME_UPPER/SAME_LOWER/VALID) per spatial
// dimension, and the output size they give (floor or, for pools with ceil_mode, ceil).
#pragma once

#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

struct Window {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;

  size_t rank() const { return in.size(); }
  // The same window with leading size-1 dimensions added up to `rank` dimensions, so one
  // 3-D loop nest serves 1-D, 2-D and 3-D operators.
  Window padded_to(size_t rank) const;
};

// The window of `node` (attributes auto_pad, pads, strides, dilations) over spatial input
// sizes `in` with kernel sizes `kernel`. UserErrors name the attribute that is wrong.
Window make_window(const Node& node, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& kernel, bool ceil_mode);

// The kernel_shape attribute, checked against the spatial rank; `fallback` when absent.
std::vector<int64_t> kernel_shape(const Node& node, size_t spatial_rank,
                                  const std::vector<int64_t>& fallback);

}  // namespace kiln::graph
