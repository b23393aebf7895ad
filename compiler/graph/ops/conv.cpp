// Conv and ConvTranspose over 1, 2 or 3 spatial dimensions, with groups (depthwise
// included), dilations, strides, explicit or automatic padding and an optional bias.
// Evaluation accumulates in double; 1-D and 2-D cases run through the 3-D loop nest.
#include "compiler/graph/ops/op_util.h"
#include "compiler/graph/ops/window.h"

namespace kiln::graph {

namespace {

const std::vector<std::string> kConvAttributes = {"auto_pad",     "dilations", "group",
                                                  "kernel_shape", "pads",      "strides"};

struct ConvShape {
  int64_t batch, in_channels, out_channels, group;
  Window window;
};

std::vector<int64_t> spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

void check_conv_operands(const InferContext& ctx) {
  const auto &x = ctx.shape(0), &w = ctx.shape(1);
  const std::string& op = ctx.node().op_type;
  require_float(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  user_check(x.size() >= 3 && x.size() <= 5)
      << op << " input must have rank 3 to 5 (N, C and 1 to 3 spatial dimensions), got shape "
      << shape_str(x);
  user_check(w.size() == x.size())
      << op << " weight shape " << shape_str(w) << " must have the input's rank " << x.size();
  user_check(ctx.node().attr_int("group", 1) >= 1)
      << op << " group must be positive, got " << ctx.node().attr_int("group", 1);
}

ConvShape conv_shape(const InferContext& ctx) {
  check_conv_operands(ctx);
  const auto &x = ctx.shape(0), &w = ctx.shape(1);
  const Node& node = ctx.node();
  ConvShape s{x[0], x[1], w[0], node.attr_int("group", 1), {}};
  user_check(s.in_channels == w[1] * s.group)
      << "Conv input has " << s.in_channels << " channels, but the weight " << shape_str(w)
      << " with group " << s.group << " expects " << w[1] * s.group;
  user_check(s.out_channels % s.group == 0)
      << "Conv output channels " << s.out_channels << " are not a multiple of group " << s.group;
  if (ctx.has_input(2))
    user_check(ctx.shape(2) == std::vector<int64_t>{s.out_channels})
        << "Conv bias shape " << shape_str(ctx.shape(2)) << " must be [" << s.out_channels << "]";
  std::vector<int64_t> kernel = spatial(w);
  user_check(kernel_shape(node, kernel.size(), kernel) == kernel)
      << "Conv kernel_shape attribute does not match the weight shape " << shape_str(w);
  s.window = make_window(node, spatial(x), kernel, false);
  return s;
}

std::vector<TensorType> infer_conv(const InferContext& ctx) {
  ConvShape s = conv_shape(ctx);
  std::vector<int64_t> out = {s.batch, s.out_channels};
  out.insert(out.end(), s.window.out.begin(), s.window.out.end());
  return {{ctx.dtype(0), out}};
}

// The range [lo, hi) of output positions o with 0 <= o * stride + offset < in.
std::pair<int64_t, int64_t> valid_range(int64_t offset, int64_t stride, int64_t in, int64_t out) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = in - 1 - offset;
  int64_t hi = last < 0 ? 0 : std::min(out, last / stride + 1);
  return {lo, std::max(lo, hi)};
}

std::vector<HostTensor> eval_conv(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const ConvShape s = conv_shape(ictx);
  const Window w = s.window.padded_to(3);
  const std::vector<double> x = ctx.input(0).to_f64(), k = ctx.input(1).to_f64();
  const std::vector<double> bias = ctx.has_input(2) ? ctx.input(2).to_f64() : std::vector<double>();
  const int64_t cin_g = s.in_channels / s.group, cout_g = s.out_channels / s.group;
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t kernel_size = w.kernel[0] * w.kernel[1] * w.kernel[2];
  std::vector<double> y(s.batch * s.out_channels * out_plane, 0.0);

  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t m = 0; m < s.out_channels; ++m) {
      double* out = &y[(n * s.out_channels + m) * out_plane];
      if (!bias.empty()) std::fill(out, out + out_plane, bias[m]);
      const int64_t g = m / cout_g;
      for (int64_t c = 0; c < cin_g; ++c) {
        const double* in = &x[(n * s.in_channels + g * cin_g + c) * in_plane];
        const double* kern = &k[(m * cin_g + c) * kernel_size];
        for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
          for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
            for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
              const double wv = kern[(kd * w.kernel[1] + kh) * w.kernel[2] + kw];
              const int64_t off_w = kw * w.dilation[2] - w.pad_begin[2];
              auto [ow_lo, ow_hi] = valid_range(off_w, w.stride[2], w.in[2], w.out[2]);
              for (int64_t od = 0; od < w.out[0]; ++od) {
                const int64_t id = od * w.stride[0] + kd * w.dilation[0] - w.pad_begin[0];
                if (id < 0 || id >= w.in[0]) continue;
                for (int64_t oh = 0; oh < w.out[1]; ++oh) {
                  const int64_t ih = oh * w.stride[1] + kh * w.dilation[1] - w.pad_begin[1];
                  if (ih < 0 || ih >= w.in[1]) continue;
                  const double* row = in + (id * w.in[1] + ih) * w.in[2];
                  double* orow = out + (od * w.out[1] + oh) * w.out[2];
                  for (int64_t ow = ow_lo; ow < ow_hi; ++ow)
                    orow[ow] += wv * row[ow * w.stride[2] + off_w];
                }
              }
            }
      }
    }
  }
  std::vector<int64_t> shape = {s.batch, s.out_channels};
  shape.insert(shape.end(), s.window.out.begin(), s.window.out.end());
  return {HostTensor::from_f64(ctx.input(0).dtype(), shape, y)};
}

// ConvTranspose: the weight is [C, M / group, k...]; each input element scatters a kernel
// into the output at stride spacing.
ConvShape conv_transpose_shape(const InferContext& ctx) {
  check_conv_operands(ctx);
  const auto &x = ctx.shape(0), &w = ctx.shape(1);
  const Node& node = ctx.node();
  const size_t rank = x.size() - 2;
  ConvShape s{x[0], x[1], 0, node.attr_int("group", 1), {}};
  user_check(w[0] == s.in_channels)
      << "ConvTranspose weight " << shape_str(w) << " must have the input's " << s.in_channels
      << " channels first";
  s.out_channels = w[1] * s.group;
  if (ctx.has_input(2))
    user_check(ctx.shape(2) == std::vector<int64_t>{s.out_channels})
        << "ConvTranspose bias shape " << shape_str(ctx.shape(2)) << " must be [" << s.out_channels
        << "]";
  Window& win = s.window;
  win.in = spatial(x);
  win.kernel = spatial(w);
  user_check(kernel_shape(node, rank, win.kernel) == win.kernel)
      << "ConvTranspose kernel_shape attribute does not match the weight shape " << shape_str(w);
  auto list = [&](const char* key, int64_t fallback) {
    std::vector<int64_t> v = node.attr_ints(key, std::vector<int64_t>(rank, fallback));
    user_check(v.size() == rank) << "ConvTranspose attribute '" << key << "' has " << v.size()
                                 << " values for " << rank << " spatial dimensions";
    return v;
  };
  win.stride = list("strides", 1);
  win.dilation = list("dilations", 1);
  const std::vector<int64_t> out_pad = list("output_padding", 0);
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * rank, 0));
  user_check(pads.size() == 2 * rank)
      << "ConvTranspose attribute 'pads' needs " << 2 * rank << " values, got " << pads.size();
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  user_check(auto_pad == "NOTSET" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" ||
             auto_pad == "VALID")
      << "ConvTranspose auto_pad '" << auto_pad
      << "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID";
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  // output_shape may list N and C too; only the spatial sizes matter.
  if (out_shape.size() == rank + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  user_check(out_shape.empty() || out_shape.size() == rank)
      << "ConvTranspose output_shape needs " << rank << " spatial sizes";
  if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
    for (size_t i = 0; i < rank; ++i) out_shape.push_back(win.in[i] * win.stride[i]);
  win.pad_begin.resize(rank);
  win.pad_end.resize(rank);
  win.out.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    user_check(win.stride[i] >= 1 && win.dilation[i] >= 1)
        << "ConvTranspose strides and dilations must be positive";
    const char* what = "ConvTranspose's output size";
    const int64_t full = checked_add(
        checked_add(checked_mul(win.stride[i], win.in[i] - 1, what), out_pad[i], what),
        checked_add(checked_mul(win.kernel[i] - 1, win.dilation[i], what), 1, what), what);
    if (!out_shape.empty()) {
      // An output_shape beyond the full result leaves its extra positions zero (bias only).
      const int64_t total = std::max<int64_t>(0, full - out_shape[i]);
      // As the ONNX spec says: SAME_UPPER puts the larger half at the end, otherwise at the
      // beginning.
      win.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      win.pad_end[i] = total - win.pad_begin[i];
      win.out[i] = out_shape[i];
    } else {
      win.pad_begin[i] = auto_pad == "VALID" ? 0 : pads[i];
      win.pad_end[i] = auto_pad == "VALID" ? 0 : pads[rank + i];
      win.out[i] = full - win.pad_begin[i] - win.pad_end[i];
    }
    user_check(win.out[i] >= 1) << "ConvTranspose output would be empty in spatial dimension " << i;
  }
  return s;
}

std::vector<TensorType> infer_conv_transpose(const InferContext& ctx) {
  ConvShape s = conv_transpose_shape(ctx);
  std::vector<int64_t> out = {s.batch, s.out_channels};
  out.insert(out.end(), s.window.out.begin(), s.window.out.end());
  return {{ctx.dtype(0), out}};
}

std::vector<HostTensor> eval_conv_transpose(const EvalContext& ctx) {
  const ConvShape s = conv_transpose_shape(ctx.infer_context());
  const Window w = s.window.padded_to(3);
  const std::vector<double> x = ctx.input(0).to_f64(), k = ctx.input(1).to_f64();
  const int64_t cin_g = s.in_channels / s.group, cout_g = s.out_channels / s.group;
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t kernel_size = w.kernel[0] * w.kernel[1] * w.kernel[2];
  std::vector<double> y(s.batch * s.out_channels * out_plane, 0.0);
  if (ctx.has_input(2)) {
    const std::vector<double> bias = ctx.input(2).to_f64();
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t m = 0; m < s.out_channels; ++m)
        std::fill_n(&y[(n * s.out_channels + m) * out_plane], out_plane, bias[m]);
  }
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.in_channels; ++c) {
      const int64_t g = c / cin_g;
      const double* in = &x[(n * s.in_channels + c) * in_plane];
      for (int64_t ml = 0; ml < cout_g; ++ml) {
        double* out = &y[(n * s.out_channels + g * cout_g + ml) * out_plane];
        const double* kern = &k[(c * cout_g + ml) * kernel_size];
        for (int64_t i = 0; i < in_plane; ++i) {
          const int64_t id = i / (w.in[1] * w.in[2]), ih = i / w.in[2] % w.in[1], iw = i % w.in[2];
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            const int64_t od = id * w.stride[0] + kd * w.dilation[0] - w.pad_begin[0];
            if (od < 0 || od >= w.out[0]) continue;
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const int64_t oh = ih * w.stride[1] + kh * w.dilation[1] - w.pad_begin[1];
              if (oh < 0 || oh >= w.out[1]) continue;
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const int64_t ow = iw * w.stride[2] + kw * w.dilation[2] - w.pad_begin[2];
                if (ow < 0 || ow >= w.out[2]) continue;
                out[(od * w.out[1] + oh) * w.out[2] + ow] +=
                    in[i] * kern[(kd * w.kernel[1] + kh) * w.kernel[2] + kw];
              }
            }
          }
        }
      }
    }
  std::vector<int64_t> shape = {s.batch, s.out_channels};
  shape.insert(shape.end(), s.window.out.begin(), s.window.out.end());
  return {HostTensor::from_f64(ctx.input(0).dtype(), shape, y)};
}

}  // namespace

void add_conv_ops(OpList& ops) {
  OpDef conv{"Conv", kConvAttributes, 2, 3};
  conv.infer = infer_conv;
  conv.eval = eval_conv;
  ops.push_back(std::move(conv));

  std::vector<std::string> attrs = kConvAttributes;
  attrs.insert(attrs.end(), {"output_padding", "output_shape"});
  OpDef transpose{"ConvTranspose", attrs, 2, 3};
  transpose.infer = infer_conv_transpose;
  transpose.eval = eval_conv_transpose;
  ops.push_back(std::move(transpose));
}

}  // namespace kiln::graph
