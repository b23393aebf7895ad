// Operators that move elements: Transpose, Concat, Slice, Split, Pad (constant, reflect,
// edge), Tile, Trilu, DepthToSpace, SpaceToDepth. They copy element bytes, so every element
// type works the same way.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

// One output axis of a gather-like copy: its size, and for each position the input index
// it reads (-1: the fill value). Evaluated only when the output has elements, so shape
// inference never walks an axis (an empty tensor may have a huge one).
struct AxisMap {
  int64_t size;
  std::function<int64_t(int64_t)> source;
};

std::vector<int64_t> map_shape(const std::vector<AxisMap>& maps) {
  std::vector<int64_t> shape;
  for (const AxisMap& m : maps) shape.push_back(m.size);
  return shape;
}

// The output whose element at multi-index (o_0, o_1, ...) is the input element at
// (maps[0].source(o_0), maps[1].source(o_1), ...), or `fill` where any source is -1.
HostTensor remap(const HostTensor& x, const std::vector<AxisMap>& maps, const HostTensor* fill) {
  HostTensor y(x.dtype(), map_shape(maps));
  if (y.numel() == 0) return y;
  const size_t rank = maps.size();
  std::vector<std::vector<int64_t>> table(rank);  // each axis is at most numel long
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < maps[d].size; ++o) table[d].push_back(maps[d].source(o));
  const size_t bytes = x.dtype().bytes();
  const std::vector<int64_t> strides = shape_strides(x.shape());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t i = table[d][idx[d]];
      if (i < 0) inside = false;
      src += i * strides[d];
    }
    if (inside)
      copy_bytes(y.raw() + o * bytes, x.raw() + src * bytes, bytes);
    else if (fill)
      copy_bytes(y.raw() + o * bytes, fill->raw(), bytes);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < maps[d].size) break;
      idx[d] = 0;
    }
  }
  return y;
}

AxisMap whole_axis(int64_t dim) {
  return {dim, [](int64_t o) { return o; }};
}

HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_shape, strides;
  const std::vector<int64_t> in_strides = shape_strides(x.shape());
  for (int64_t p : perm) {
    out_shape.push_back(x.shape()[p]);
    strides.push_back(in_strides[p]);
  }
  HostTensor y(x.dtype(), out_shape);
  const size_t bytes = x.dtype().bytes();
  for_each_index(out_shape, {strides}, [&](int64_t o, const int64_t* off) {
    copy_bytes(y.raw() + o * bytes, x.raw() + off[0] * bytes, bytes);
  });
  return y;
}

std::vector<int64_t> transpose_perm(const InferContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.shape(0).size());
  std::vector<int64_t> reversed;
  for (int64_t i = rank - 1; i >= 0; --i) reversed.push_back(i);
  std::vector<int64_t> perm = ctx.node().attr_ints("perm", reversed);
  user_check(static_cast<int64_t>(perm.size()) == rank)
      << "Transpose perm has " << perm.size() << " entries for an input of rank " << rank;
  // normalize_axes refuses repeats, so rank distinct axes are a permutation.
  return normalize_axes(perm, rank, "Transpose perm");
}

std::vector<TensorType> infer_transpose(const InferContext& ctx) {
  std::vector<int64_t> out;
  for (int64_t p : transpose_perm(ctx)) out.push_back(ctx.shape(0)[p]);
  return {{ctx.dtype(0), out}};
}

std::vector<TensorType> infer_concat(const InferContext& ctx) {
  std::vector<int64_t> out = ctx.shape(0);
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), out.size());
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    require_same_dtype(ctx, 0, i);
    const auto& s = ctx.shape(i);
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      ok = d == static_cast<size_t>(axis) || s[d] == out[d];
    user_check(ok) << "Concat input " << i << " of shape " << shape_str(s)
                   << " does not match input 0 " << shape_str(ctx.shape(0)) << " outside axis "
                   << axis;
    out[axis] = checked_add(out[axis], s[axis], "the Concat result's size");
  }
  return {{ctx.dtype(0), out}};
}

std::vector<HostTensor> eval_concat(const EvalContext& ctx) {
  const TensorType out = infer_concat(ctx.infer_context())[0];
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), out.shape.size());
  HostTensor y(out.dtype, out.shape);
  const size_t bytes = out.dtype.bytes();
  const int64_t outer = shape_numel({out.shape.begin(), out.shape.begin() + axis});
  const int64_t inner = shape_numel({out.shape.begin() + axis + 1, out.shape.end()});
  int64_t offset = 0;  // along the axis
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const HostTensor& x = ctx.input(i);
    const int64_t block = x.shape()[axis] * inner;
    for (int64_t p = 0; p < outer; ++p)
      copy_bytes(y.raw() + (p * out.shape[axis] * inner + offset * inner) * bytes,
                 x.raw() + p * block * bytes, block * bytes);
    offset += x.shape()[axis];
  }
  return {y};
}

// Slice: per axis, the input positions start, start + step, ... before end.
std::vector<AxisMap> slice_map(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const std::vector<int64_t> starts = ctx.ints(1, "starts"), ends = ctx.ints(2, "ends");
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
  if (ctx.has_input(3)) axes = ctx.ints(3, "axes");
  std::vector<int64_t> steps(starts.size(), 1);
  if (ctx.has_input(4)) steps = ctx.ints(4, "steps");
  user_check(ends.size() == starts.size() && axes.size() == starts.size() &&
             steps.size() == starts.size())
      << "Slice starts, ends, axes and steps must have one length, got " << starts.size() << ", "
      << ends.size() << ", " << axes.size() << ", " << steps.size();
  axes = normalize_axes(axes, rank, "Slice axes");
  std::vector<AxisMap> map;
  for (int64_t d = 0; d < rank; ++d) map.push_back(whole_axis(x[d]));
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t dim = x[axes[k]], step = steps[k];
    user_check(step != 0) << "Slice step must not be 0";
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + dim : ends[k];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    // The count first: stepping past `end` could overflow with a huge step.
    const int64_t span = step > 0 ? end - start : start - end;
    const int64_t magnitude = step > 0 ? step
                                       : (step == std::numeric_limits<int64_t>::min()
                                              ? std::numeric_limits<int64_t>::max()
                                              : -step);
    const int64_t count = span <= 0 ? 0 : (span - 1) / magnitude + 1;
    map[axes[k]] = {count, [start, step](int64_t o) { return start + o * step; }};
  }
  return map;
}

std::vector<TensorType> infer_slice(const InferContext& ctx) {
  return {{ctx.dtype(0), map_shape(slice_map(ctx))}};
}

std::vector<HostTensor> eval_slice(const EvalContext& ctx) {
  return {remap(ctx.input(0), slice_map(ctx.infer_context()), nullptr)};
}

// Split: the sizes of the parts along the axis.
std::vector<int64_t> split_sizes(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.size());
  const int64_t parts = static_cast<int64_t>(ctx.node().outputs.size());
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    sizes = ctx.ints(1, "split");
    user_check(static_cast<int64_t>(sizes.size()) == parts)
        << "Split has " << parts << " outputs but " << sizes.size() << " sizes";
    int64_t total = 0;
    for (int64_t s : sizes) {
      user_check(s >= 0) << "Split size " << s << " is negative";
      total = checked_add(total, s, "the sum of Split sizes");
    }
    user_check(total == x[axis]) << "Split sizes sum to " << total << ", but axis " << axis
                                 << " has " << x[axis];
    return sizes;
  }
  // Equal parts; with num_outputs (opset 18) the last part may be smaller.
  const int64_t chunk = parts ? (x[axis] + parts - 1) / parts : 0;
  user_check(ctx.node().has_attr("num_outputs") || (parts && x[axis] % parts == 0))
      << "Split of axis " << axis << " (" << x[axis] << ") into " << parts
      << " equal parts does not divide evenly";
  for (int64_t i = 0; i < parts; ++i)
    sizes.push_back(std::max<int64_t>(0, std::min(chunk, x[axis] - i * chunk)));
  return sizes;
}

std::vector<TensorType> infer_split(const InferContext& ctx) {
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), ctx.shape(0).size());
  std::vector<TensorType> out;
  for (int64_t s : split_sizes(ctx)) {
    std::vector<int64_t> shape = ctx.shape(0);
    shape[axis] = s;
    out.push_back({ctx.dtype(0), shape});
  }
  return out;
}

std::vector<HostTensor> eval_split(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const auto& x = ctx.input(0).shape();
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.size());
  std::vector<HostTensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes(ictx)) {
    std::vector<AxisMap> map;
    for (size_t d = 0; d < x.size(); ++d) map.push_back(whole_axis(x[d]));
    map[axis] = {s, [start](int64_t o) { return start + o; }};
    out.push_back(remap(ctx.input(0), map, nullptr));
    start += s;
  }
  return out;
}

// Pad: per axis the input position of each output position, -1 for the constant.
std::vector<AxisMap> pad_map(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const std::string mode = ctx.node().attr_string("mode", "constant");
  user_check(mode == "constant" || mode == "reflect" || mode == "edge")
      << "Pad mode '" << mode << "' is not one of constant, reflect, edge";
  const std::vector<int64_t> raw = ctx.ints(1, "pads");
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (ctx.has_input(3)) axes = normalize_axes(ctx.ints(3, "axes"), rank, "Pad axes");
  const size_t n = axes.size();
  user_check(raw.size() == 2 * n) << "Pad pads has " << raw.size() << " values; it needs " << 2 * n
                                  << " (a begin and an end per axis)";
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t k = 0; k < n; ++k) {
    begin[axes[k]] = raw[k];
    end[axes[k]] = raw[n + k];
  }
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    user_check(std::abs(begin[d]) < (int64_t{1} << 40) && std::abs(end[d]) < (int64_t{1} << 40))
        << "Pad amount out of range";
    out_shape.push_back(x[d] + begin[d] + end[d]);
    user_check(out_shape.back() >= 0) << "Pad of axis " << d << " (" << x[d] << ") by " << begin[d]
                                      << " and " << end[d] << " leaves a negative size";
  }
  std::vector<AxisMap> map;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = x[d], before = begin[d];
    user_check(mode == "constant" || dim > 0 || out_shape[d] == 0)
        << "Pad mode '" << mode << "' needs a non-empty axis " << d;
    map.push_back({out_shape[d], [dim, before, mode](int64_t o) -> int64_t {
                     const int64_t i = o - before;
                     if (i >= 0 && i < dim) return i;
                     if (mode == "constant") return -1;
                     if (mode == "edge") return std::clamp<int64_t>(i, 0, dim - 1);
                     // reflect: mirror about the edges without repeating them.
                     const int64_t period = 2 * (dim - 1);
                     if (period == 0) return 0;
                     const int64_t r = ((i % period) + period) % period;
                     return r >= dim ? period - r : r;
                   }});
  }
  return map;
}

std::vector<TensorType> infer_pad(const InferContext& ctx) {
  return {{ctx.dtype(0), map_shape(pad_map(ctx))}};
}

std::vector<HostTensor> eval_pad(const EvalContext& ctx) {
  const std::vector<AxisMap> map = pad_map(ctx.infer_context());
  const HostTensor& x = ctx.input(0);
  HostTensor fill(x.dtype(), {});  // zero unless constant_value says otherwise
  if (ctx.has_input(2)) {
    const HostTensor& value = ctx.input(2);
    user_check(value.numel() <= 1)
        << "Pad constant_value must be a scalar, got shape " << shape_str(value.shape());
    // Converted: opset < 11 models get an f32 value from the attribute whatever the type.
    if (value.numel() == 1)
      fill = is_float_dtype(value.dtype()) ? HostTensor::from_f64(x.dtype(), {}, {value.f64_at(0)})
                                           : HostTensor::from_i64(x.dtype(), {}, {value.i64_at(0)});
  }
  return {remap(x, map, &fill)};
}

std::vector<AxisMap> tile_map(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const std::vector<int64_t> repeats = ctx.ints(1, "repeats");
  user_check(repeats.size() == x.size())
      << "Tile repeats has " << repeats.size() << " values for an input of rank " << x.size();
  std::vector<AxisMap> map;
  for (size_t d = 0; d < x.size(); ++d) {
    user_check(repeats[d] >= 0) << "Tile repeat " << repeats[d] << " is negative";
    const int64_t dim = x[d];
    map.push_back(
        {checked_mul(dim, repeats[d], "Tile's output size"), [dim](int64_t o) { return o % dim; }});
  }
  return map;
}

// Trilu: keeps the upper (or lower) triangle of the last two dimensions, from diagonal k.
std::vector<HostTensor> eval_trilu(const EvalContext& ctx) {
  const HostTensor& x = ctx.input(0);
  const int64_t k = ctx.has_input(1) ? ctx.input(1).i64_at(0) : 0;
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  HostTensor y = x;
  const size_t bytes = x.dtype().bytes();
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t i = e / cols % rows, j = e % cols;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) std::memset(y.raw() + e * bytes, 0, bytes);
  }
  return {y};
}

// DepthToSpace and SpaceToDepth as reshape + transpose + reshape.
struct BlockShuffle {
  std::vector<int64_t> split_shape, perm, out;
};

BlockShuffle block_shuffle(const InferContext& ctx, bool to_space) {
  const auto& x = ctx.shape(0);
  user_check(x.size() == 4) << ctx.node().op_type << " needs a 4-D input, got " << shape_str(x);
  const int64_t b = ctx.node().attr_int("blocksize", 0);
  user_check(b >= 1) << ctx.node().op_type << " blocksize must be positive, got " << b;
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  BlockShuffle s;
  if (to_space) {
    user_check(c % (b * b) == 0) << "DepthToSpace channels " << c << " are not a multiple of "
                                 << b * b;
    const std::string mode = ctx.node().attr_string("mode", "DCR");
    user_check(mode == "DCR" || mode == "CRD")
        << "DepthToSpace mode '" << mode << "' is not DCR or CRD";
    if (mode == "DCR") {
      s.split_shape = {n, b, b, c / (b * b), h, w};
      s.perm = {0, 3, 4, 1, 5, 2};
    } else {
      s.split_shape = {n, c / (b * b), b, b, h, w};
      s.perm = {0, 1, 4, 2, 5, 3};
    }
    s.out = {n, c / (b * b), h * b, w * b};
  } else {
    user_check(h % b == 0 && w % b == 0)
        << "SpaceToDepth of " << shape_str(x) << " by blocksize " << b << " does not divide evenly";
    s.split_shape = {n, c, h / b, b, w / b, b};
    s.perm = {0, 3, 5, 1, 2, 4};
    s.out = {n, c * b * b, h / b, w / b};
  }
  return s;
}

OpDef block_shuffle_op(std::string type, bool to_space) {
  OpDef def{std::move(type), to_space ? std::vector<std::string>{"blocksize", "mode"}
                                      : std::vector<std::string>{"blocksize"}};
  def.infer = [to_space](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), block_shuffle(ctx, to_space).out}};
  };
  def.eval = [to_space](const EvalContext& ctx) -> std::vector<HostTensor> {
    const BlockShuffle s = block_shuffle(ctx.infer_context(), to_space);
    return {transpose(ctx.input(0).reshaped(s.split_shape), s.perm).reshaped(s.out)};
  };
  return def;
}

}  // namespace
void add_data_movement_ops(OpList& ops) {
  OpDef tr{"Transpose", {"perm"}};
  tr.infer = infer_transpose;
  tr.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {transpose(ctx.input(0), transpose_perm(ctx.infer_context()))};
  };
  ops.push_back(std::move(tr));

  OpDef concat{"Concat", {"axis"}, 1, -1};
  concat.infer = infer_concat;
  concat.eval = eval_concat;
  ops.push_back(std::move(concat));

  OpDef slice{"Slice", {}, 3, 5};
  slice.infer = infer_slice;
  slice.eval = eval_slice;
  ops.push_back(std::move(slice));

  OpDef split{"Split", {"axis", "num_outputs"}, 1, 2, 1, -1};
  split.infer = infer_split;
  split.eval = eval_split;
  ops.push_back(std::move(split));

  OpDef pad{"Pad", {"mode"}, 2, 4};
  pad.infer = infer_pad;
  pad.eval = eval_pad;
  ops.push_back(std::move(pad));

  OpDef tile{"Tile", {}, 2, 2};
  tile.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), map_shape(tile_map(ctx))}};
  };
  tile.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {remap(ctx.input(0), tile_map(ctx.infer_context()), nullptr)};
  };
  ops.push_back(std::move(tile));

  OpDef trilu{"Trilu", {"upper"}, 1, 2};
  trilu.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    user_check(ctx.shape(0).size() >= 2)
        << "Trilu needs an input of rank >= 2, got " << shape_str(ctx.shape(0));
    if (ctx.has_input(1)) user_check(shape_numel(ctx.shape(1)) == 1) << "Trilu k must be a scalar";
    return {ctx.input(0)};
  };
  trilu.eval = eval_trilu;
  ops.push_back(std::move(trilu));

  ops.push_back(block_shuffle_op("DepthToSpace", true));
  ops.push_back(block_shuffle_op("SpaceToDepth", false));
}

}  // namespace kiln::graph
