#include "compiler/graph/ops/window.h"

namespace kiln::graph {

namespace {

// Bounds kernel sizes, strides, dilations and pads so that window arithmetic on any tensor
// size stays within int64.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

// A per-dimension attribute list: `fallback` in every dimension when absent.
std::vector<int64_t> per_dim(const Node& node, const char* key, size_t rank, int64_t fallback,
                             int64_t minimum) {
  std::vector<int64_t> v = node.attr_ints(key, std::vector<int64_t>(rank, fallback));
  user_check(v.size() == rank) << node.op_type << " attribute '" << key << "' has " << v.size()
                               << " values, but the input has " << rank << " spatial dimensions";
  for (int64_t x : v)
    user_check(x >= minimum && x <= kMaxWindowValue)
        << node.op_type << " attribute '" << key << "' value " << x << " must be in [" << minimum
        << ", " << kMaxWindowValue << "]";
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

}  // namespace

std::vector<int64_t> kernel_shape(const Node& node, size_t spatial_rank,
                                  const std::vector<int64_t>& fallback) {
  if (!node.has_attr("kernel_shape")) return fallback;
  return per_dim(node, "kernel_shape", spatial_rank, 1, 1);
}

Window make_window(const Node& node, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t rank = in.size();
  Window w;
  w.in = in;
  w.kernel = kernel;
  w.stride = per_dim(node, "strides", rank, 1, 1);
  w.dilation = per_dim(node, "dilations", rank, 1, 1);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  user_check(auto_pad == "NOTSET" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" ||
             auto_pad == "VALID")
      << node.op_type << " auto_pad '" << auto_pad
      << "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID";
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * rank, 0));
  user_check(pads.size() == 2 * rank)
      << node.op_type << " attribute 'pads' has " << pads.size()
      << " values; it needs 2 per spatial dimension (" << 2 * rank << ")";
  for (int64_t p : pads)
    user_check(p >= 0 && p <= kMaxWindowValue)
        << node.op_type << " pads must be in [0, " << kMaxWindowValue << "], got " << p;
  w.pad_begin.resize(rank);
  w.pad_end.resize(rank);
  w.out.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    user_check(kernel[i] >= 1 && kernel[i] <= kMaxWindowValue)
        << node.op_type << " kernel size " << kernel[i] << " must be in [1, " << kMaxWindowValue
        << "]";
    const int64_t span = w.dilation[i] * (kernel[i] - 1) + 1;  // input extent of one window
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = ceil_div(in[i], w.stride[i]);
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.stride[i] + span - in[i]);
      // SAME_UPPER puts the odd padding element at the end, SAME_LOWER at the beginning.
      int64_t small = total / 2, large = total - total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pad_end[i] = auto_pad == "SAME_UPPER" ? large : small;
      continue;
    }
    if (auto_pad == "NOTSET") {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[rank + i];
    } else {
      w.pad_begin[i] = w.pad_end[i] = 0;
    }
    const int64_t room = in[i] + w.pad_begin[i] + w.pad_end[i] - span;
    user_check(room >= 0) << node.op_type << " window of " << span << " (kernel " << kernel[i]
                          << ", dilation " << w.dilation[i] << ") is larger than the padded input ("
                          << in[i] + w.pad_begin[i] + w.pad_end[i] << ") in spatial dimension "
                          << i;
    w.out[i] = (ceil_mode ? ceil_div(room, w.stride[i]) : floor_div(room, w.stride[i])) + 1;
    // As in PyTorch: in ceil mode the last window must start inside the input or its
    // leading padding, not entirely in the trailing padding.
    if (ceil_mode && (w.out[i] - 1) * w.stride[i] >= in[i] + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

Window Window::padded_to(size_t target) const {
  internal_check(rank() <= target) << "window of rank " << rank() << " padded to " << target;
  Window w = *this;
  const size_t extra = target - rank();
  auto pad = [extra](std::vector<int64_t>& v, int64_t fill) { v.insert(v.begin(), extra, fill); };
  pad(w.in, 1);
  pad(w.kernel, 1);
  pad(w.stride, 1);
  pad(w.dilation, 1);
  pad(w.pad_begin, 0);
  pad(w.pad_end, 0);
  pad(w.out, 1);
  return w;
}

}  // namespace kiln::graph
