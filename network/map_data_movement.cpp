// op_table mappers for data movement: reshapes, Concat, Transpose, strided windows (Slice,
// Gather), Pad, Resize.
#include <algorithm>
#include <cmath>
#include <optional>

#include "network/op_mapping.h"
#include "schedules/data_movement/data_movement.h"

namespace kiln::network::mapping {

// Flatten, Reshape, Squeeze, Unsqueeze: a copy into the new shape.
MappedNode map_reshape(Graph& g, const Node& n) {
  std::vector<int64_t> in = dims_of(g, n.inputs[0]), out = dims_of(g, n.outputs[0]);
  // The copy is flat whatever the shapes: above the kernel's rank 4, describe it as 1-D.
  if (in.empty() || in.size() > 4) in = {numel(in)};
  if (out.empty() || out.size() > 4) out = {numel(out)};
  MappedNode m;
  Workload& w = m.workload;
  w.op = "reshape";
  w.params["ndim"] = static_cast<int64_t>(in.size());
  w.params["ondim"] = static_cast<int64_t>(out.size());
  for (size_t i = 0; i < in.size(); ++i) w.params["D" + std::to_string(i)] = in[i];
  for (size_t i = 0; i < out.size(); ++i) w.params["O" + std::to_string(i)] = out[i];
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_concat(Graph& g, const Node& n) {
  std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  node_check(rank >= 1 && rank <= 5) << "concat of rank " << rank << " is not supported (1..5)";
  node_check(!n.inputs.empty() && n.inputs.size() <= schedules::kMaxConcatInputs)
      << n.inputs.size() << " inputs are not supported (1.." << schedules::kMaxConcatInputs << ")";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "concat";
  w.params["ndim"] = rank, w.params["axis"] = axis;
  w.params["inputs"] = static_cast<int64_t>(n.inputs.size());
  for (int64_t i = 0; i < rank; ++i) w.params["D" + std::to_string(i)] = i == axis ? 1 : out[i];
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    w.params["E" + std::to_string(k)] = dims_of(g, n.inputs[k])[axis];
    m.operands["X" + std::to_string(k)] = n.inputs[k];
  }
  return m;
}

MappedNode map_channel_shuffle(Graph& g, const Node& n) {
  const std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  node_check(out.size() >= 2) << "a channel shuffle of rank " << out.size()
                              << " is not supported (2 and up)";
  node_check(n.inputs.size() <= schedules::kMaxConcatInputs)
      << n.inputs.size() << " inputs are not supported (1.." << schedules::kMaxConcatInputs << ")";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "channel_shuffle";
  w.params["N"] = out[0];
  w.params["HW"] = numel({out.begin() + 2, out.end()});
  w.params["group"] = n.attr_int("group", 1);
  w.params["block"] = 1;
  w.params["inputs"] = static_cast<int64_t>(n.inputs.size());
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    w.params["E" + std::to_string(k)] = dims_of(g, n.inputs[k]).at(1);
    w.params["B" + std::to_string(k)] = 1;
    m.operands["X" + std::to_string(k)] = n.inputs[k];
  }
  return m;
}

namespace {

// A strided window of X: start, step and extent per dimension.
struct Window {
  std::vector<int64_t> in, start, step, out;
};

}  // namespace

namespace {

// The same window with dimensions of extent 1 dropped and each dimension merged into the one
// before it when it is taken whole (the kernel then walks fewer, longer loops).
Window simplified(Window w) {
  Window s;
  for (size_t i = 0; i < w.in.size(); ++i) {
    if (w.in[i] == 1) continue;
    const bool whole = w.start[i] == 0 && w.step[i] == 1 && w.out[i] == w.in[i];
    if (!s.in.empty() && whole && s.step.back() == 1) {
      s.in.back() *= w.in[i], s.start.back() *= w.in[i], s.out.back() *= w.in[i];
      continue;
    }
    s.in.push_back(w.in[i]), s.start.push_back(w.start[i]), s.step.push_back(w.step[i]);
    s.out.push_back(w.out[i]);
  }
  if (s.in.empty()) s = {{1}, {0}, {1}, {1}};
  return s;
}

}  // namespace

namespace {

MappedNode map_window(const Graph& g, const Node& n, const Window& window) {
  Window s = simplified(window);
  node_check(s.in.size() <= 4) << "a slice of rank " << s.in.size()
                               << " (after merging whole dimensions) is not supported (1..4)";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "slice";
  w.params["ndim"] = static_cast<int64_t>(s.in.size());
  for (size_t i = 0; i < s.in.size(); ++i) {
    const std::string d = std::to_string(i);
    w.params["D" + d] = s.in[i], w.params["S" + d] = s.start[i];
    w.params["T" + d] = s.step[i], w.params["O" + d] = s.out[i];
  }
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

}  // namespace

// Slice with any non-zero steps (the window's extents are the inferred output's).
MappedNode map_slice(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]), y = dims_of(g, n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts = constant_ints(g, n, 1, "starts");
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (n.has_input(3))
    axes = constant_ints(g, n, 3, "axes");
  else
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (n.has_input(4)) steps = constant_ints(g, n, 4, "steps");
  Window w{x, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), y};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalized_axis(g, n, axes[i], rank);
    node_check(steps[i] != 0) << "step 0 is not valid";
    int64_t start = starts[i] < 0 ? starts[i] + x[a] : starts[i];
    // ONNX clamps the start into [0, dim] walking forwards, [0, dim - 1] walking backwards.
    w.start[a] = std::clamp<int64_t>(start, 0, steps[i] > 0 ? x[a] : x[a] - 1);
    w.step[a] = steps[i];
  }
  node_check(numel(y) > 0) << "an empty slice is not supported";
  return map_window(g, n, w);
}

// Gather of constant indices that step evenly along the axis (one index, a range, every
// other row): a slice. Embedding lookups (computed indices) are not among them.
namespace {

// Constant indices that step evenly upwards (wrapped into [0, extent)), or nothing.
std::optional<std::pair<int64_t, int64_t>> even_steps(const Graph& g, const std::string& indices,
                                                      int64_t extent) {
  if (!g.is_constant(indices)) return std::nullopt;
  std::vector<int64_t> idx = g.initializers.at(indices).to_i64();
  if (idx.empty()) return std::nullopt;
  for (int64_t& i : idx) i = i < 0 ? i + extent : i;
  const int64_t step = idx.size() > 1 ? idx[1] - idx[0] : 1;
  for (size_t i = 1; i < idx.size(); ++i)
    if (step <= 0 || idx[i] - idx[i - 1] != step) return std::nullopt;
  if (idx[0] < 0 || idx.back() >= extent) return std::nullopt;
  return std::pair{idx[0], step};
}

}  // namespace

MappedNode map_gather(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalized_axis(g, n, n.attr_int("axis", 0), rank);
  const int64_t k = numel(dims_of(g, n.inputs[1]));
  node_check(k > 0) << "empty indices are not supported";
  // ONNX makes an index outside [-N, N-1] an error; a constant one is refused here, a
  // computed one by the kernel at run time (the model's run returns an error).
  if (g.is_constant(n.inputs[1])) {
    const std::vector<double> idx = g.initializers.at(n.inputs[1]).to_f64();
    for (size_t j = 0; j < idx.size(); ++j)
      node_check(idx[j] >= -double(x[axis]) && idx[j] < double(x[axis]))
          << "index " << idx[j] << " (element " << j << " of the indices) is out of range for "
          << "axis " << axis << " of size " << x[axis] << " (valid: " << -x[axis] << " to "
          << x[axis] - 1 << ")";
  }
  if (auto strided = even_steps(g, n.inputs[1], x[axis])) {
    Window w{x, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), x};
    w.start[axis] = strided->first, w.step[axis] = strided->second, w.out[axis] = k;
    return map_window(g, n, w);
  }
  // The data as [outer, N, inner] around the axis; the indices' own shape only reshapes the
  // output, whose memory is [outer, K, inner] either way.
  MappedNode m;
  Workload& w = m.workload;
  w.op = "gather";
  w.params["outer"] = numel({x.begin(), x.begin() + axis});
  w.params["N"] = x[axis];
  w.params["inner"] = numel({x.begin() + axis + 1, x.end()});
  w.params["K"] = k;
  m.operands = {{"data", n.inputs[0]}, {"indices", n.inputs[1]}};
  return m;
}

// Pad with a constant (mode "constant", no negative pads).
MappedNode map_pad(Graph& g, const Node& n) {
  const std::string mode = n.attr_string("mode", "constant");
  node_check(mode == "constant" || mode == "edge" || mode == "reflect")
      << "mode " << mode << " is not supported (constant, edge, reflect)";
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  node_check(rank >= 1 && rank <= 5) << "pad of rank " << rank << " is not supported (1..5)";
  std::vector<int64_t> pads = constant_ints(g, n, 1, "pads");
  std::vector<int64_t> axes;
  if (n.has_input(3))
    axes = constant_ints(g, n, 3, "axes");
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  node_check(pads.size() == 2 * axes.size()) << "pads must have 2 values per padded axis";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "pad";
  w.params["ndim"] = rank;
  for (int64_t i = 0; i < rank; ++i) {
    w.params["D" + std::to_string(i)] = x[i];
    w.params["B" + std::to_string(i)] = 0, w.params["A" + std::to_string(i)] = 0;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string a = std::to_string(normalized_axis(g, n, axes[i], rank));
    const int64_t before = pads[i], after = pads[i + axes.size()];
    node_check(before >= 0 && after >= 0) << "negative pads (cropping) are not supported";
    w.params["B" + a] = before, w.params["A" + a] = after;
  }
  double value = 0;  // read by the constant mode only
  if (n.has_input(2) && mode == "constant") {
    node_check(g.is_constant(n.inputs[2])) << "constant_value must be a constant";
    value = g.initializers.at(n.inputs[2]).f64_at(0);
  }
  node_check(!std::isnan(value)) << "pad value is NaN";
  w.params["value"] = value;
  if (mode != "constant") w.params["mode"] = mode == "edge" ? 1 : 2;  // the pad kernel's modes
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// Resize / Upsample of H and W of an NCHW tensor, nearest or linear.
MappedNode map_resize(Graph& g, const Node& n) {
  std::vector<int64_t> x = rank4_input(g, n), y = dims_of(g, n.outputs[0]);
  node_check(y[0] == x[0] && y[1] == x[1]) << "resizing N or C is not supported (only H and W)";
  const std::string mode = n.attr_string("mode", "nearest");
  node_check(mode == "nearest" || mode == "linear")
      << "mode " << mode << " is not supported (nearest, linear)";
  static const std::vector<std::string> kCoords = {
      "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  static const std::vector<std::string> kNearest = {"round_prefer_floor", "round_prefer_ceil",
                                                    "floor", "ceil"};
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  auto code = [&](const std::vector<std::string>& names, const std::string& v, const char* what) {
    auto it = std::find(names.begin(), names.end(), v);
    std::string valid;
    for (const std::string& s : names) valid += (valid.empty() ? "" : ", ") + s;
    node_check(it != names.end()) << what << " " << v << " is not supported (" << valid << ")";
    return static_cast<int64_t>(it - names.begin());
  };
  node_check(n.attr_int("antialias", 0) == 0) << "antialias is not supported";
  // The scales the transformation divides by: given, or output / input in f32 as ONNX has it.
  std::vector<double> scales;
  if (n.has_input(2) && g.is_constant(n.inputs[2]) && g.initializers.at(n.inputs[2]).numel() > 0) {
    scales = g.initializers.at(n.inputs[2]).to_f64();
    node_check(scales.size() == 4) << "scales must have 4 values";
  } else {
    for (size_t i = 0; i < 4; ++i)
      scales.push_back(static_cast<float>(y[i]) / static_cast<float>(x[i]));
  }
  MappedNode m;
  Workload& w = m.workload;
  w.op = "resize";
  set_nchw(w, x);
  w.params["OH"] = y[2], w.params["OW"] = y[3];
  w.params["linear"] = mode == "linear" ? 1 : 0;
  w.params["coord"] = code(kCoords, coord, "coordinate_transformation_mode");
  w.params["nearest_mode"] = code(kNearest, nearest, "nearest_mode");
  w.params["scale_h"] = scales[2], w.params["scale_w"] = scales[3];
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// Transpose after dropping dimensions of extent 1 and merging input dimensions that stay
// neighbours in the same order (attention's rank-5 head shuffles become rank 3 or 4).
MappedNode map_transpose(Graph& g, const Node& n) {
  std::vector<int64_t> in = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  node_check(static_cast<int64_t>(perm.size()) == rank) << "perm must have " << rank << " values";
  // Groups of input dimensions in output order: each a run of consecutive input dimensions.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : perm) {
    if (in[p] == 1) continue;
    if (!groups.empty() && groups.back().back() + 1 == p) {
      groups.back().push_back(p);
      continue;
    }
    groups.push_back({p});
  }
  // A merged dimension may still be interrupted by dropped 1s in the input: that is fine,
  // extent-1 dimensions occupy no memory. Number the groups by their input position.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return groups[x].front() < groups[y].front(); });
  std::vector<int64_t> dims(groups.size()), new_perm(groups.size());
  for (size_t pos = 0; pos < order.size(); ++pos) {
    int64_t extent = 1;
    for (int64_t d : groups[order[pos]]) extent *= in[d];
    dims[pos] = extent;
    new_perm[order[pos]] = static_cast<int64_t>(pos);
  }
  if (dims.empty()) dims = {1}, new_perm = {0};
  node_check(dims.size() <= 5) << "transpose of rank " << dims.size()
                               << " (after merging dimensions) is not supported (1..5)";
  MappedNode m;
  m.workload.op = "transpose";
  m.workload.params["ndim"] = static_cast<int64_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    m.workload.params["D" + std::to_string(i)] = dims[i];
    m.workload.params["P" + std::to_string(i)] = new_perm[i];
  }
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

}  // namespace kiln::network::mapping
