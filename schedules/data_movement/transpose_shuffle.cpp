#include "schedules/data_movement/transpose_shuffle.h"

#include <algorithm>
#include <bit>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/te/schedule.h"
#include "schedules/data_movement/data_movement.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Stmt;
using ir::Var;

ir::Stmt transpose_in_registers(const std::vector<Expr>& rows, const std::string& stem,
                                const std::function<Stmt(const std::vector<Expr>&)>& use) {
  const int t = static_cast<int>(rows.size());
  internal_check(t >= 2 && std::has_single_bit(static_cast<unsigned>(t)) &&
                 rows.front().type().lanes == t)
      << "transpose_in_registers: needs 2^k vectors of 2^k lanes, got " << t << " of "
      << rows.front().type().str();
  // Every intermediate is bound to a variable: the network reads each twice, and a store
  // between two reads of an unbound load would make LLVM load it again (X and Y may alias).
  std::vector<std::pair<Var, Expr>> lets;
  std::vector<Expr> v;
  auto bind = [&](const Expr& e, const std::string& name) {
    Var var(name, e.type());
    lets.emplace_back(var, e);
    return Expr(var);
  };
  for (int r = 0; r < t; ++r) v.push_back(bind(rows[r], stem + ".r" + std::to_string(r)));
  // Stage g swaps bit g of the row index with bit g of the column index: rows i and i|g
  // trade their lanes whose bit g differs from the row's (a 2x2 block transpose of g x g
  // blocks; g = 1 is NEON's trn1/trn2, g = 2 on 4 lanes zip1/zip2 .2d, on x86 unpck/shuf
  // and 128/256-bit lane shuffles). After every bit, row c holds column c.
  for (int g = 1; g < t; g *= 2) {
    std::vector<int> lo(t), hi(t);
    for (int p = 0; p < t; ++p) {
      lo[p] = (p & g) ? t + (p ^ g) : p;  // row i keeps lanes with bit g clear, takes j's
      hi[p] = (p & g) ? t + p : (p ^ g);  // row j keeps lanes with bit g set, takes i's
    }
    std::vector<Expr> next(t);
    for (int i = 0; i < t; ++i) {
      if (i & g) continue;
      const int j = i | g;
      const std::string s = stem + ".s" + std::to_string(g) + ".";
      next[i] = bind(ir::make_shuffle(v[i], v[j], lo), s + std::to_string(i));
      next[j] = bind(ir::make_shuffle(v[i], v[j], hi), s + std::to_string(j));
    }
    v = std::move(next);
  }
  Stmt body = use(v);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = ir::make_let_stmt(it->first, it->second, body);
  return body;
}

namespace {

// The register tile's edge: one vector of f32 lanes (16 at most: 16 zmm rows of a 16x16 tile
// plus the network's temporaries fit AVX-512's 32 registers), for half types the same count
// of elements in half the bits.
int64_t tile_edge(const Target& t) {
  return std::min<int64_t>(t.lanes(DataType::f32()), 16);
}

// The transpose as the tile sees it: output dimension `a` walks the input's innermost one
// (the tile's columns), the output's innermost `j` walks input dimension `p` (its rows).
struct TileAxes {
  size_t a, j, p;
};

TileAxes tile_axes(const TransposeShape& s) {
  const size_t n = s.in.size();
  const size_t a = std::find(s.perm.begin(), s.perm.end(), int64_t(n) - 1) - s.perm.begin();
  return {a, n - 1, static_cast<size_t>(s.perm[n - 1])};
}

// The body of one T x T tile at the region's base: T row loads, the register transpose, T
// column stores. A tile that the end of `a` or `j` cuts short (`masked`) runs the same way
// with masked loads and stores: rows past the end re-read the last row (in bounds, never
// stored), lanes past the end are neither read nor written.
Stmt tile_body(const te::TensorizeRegion& r, const TransposeShape& s, int64_t tile, bool masked) {
  const TileAxes ax = tile_axes(s);
  const size_t n = s.in.size();
  const int lanes = static_cast<int>(tile);
  const ir::Buffer& y = r.output;
  internal_check(r.inputs.size() == 1) << "transpose.shuffle: the body reads one tensor";
  const auto& [x, in_base] = r.inputs.front();
  const std::vector<Expr>& out_base = r.output_base;

  // Lanes of a row (along `a`, the input's innermost) and of a column (along `j`) that exist.
  Expr a_lanes =
      ir::make_ramp(out_base[ax.a], 1, lanes) < ir::make_broadcast(Expr(s.out[ax.a]), lanes);
  Expr j_lanes =
      ir::make_ramp(out_base[ax.j], 1, lanes) < ir::make_broadcast(Expr(s.out[ax.j]), lanes);
  std::vector<Expr> rows;
  for (int64_t row = 0; row < tile; ++row) {
    std::vector<Expr> idx = in_base;
    idx[ax.p] =
        masked ? ir::min(idx[ax.p] + Expr(row), Expr(s.in[ax.p] - 1)) : idx[ax.p] + Expr(row);
    idx[n - 1] = ir::make_ramp(in_base[n - 1], 1, lanes);
    rows.push_back(ir::make_load(x, idx, masked ? a_lanes : Expr()));
  }
  return transpose_in_registers(rows, "t", [&](const std::vector<Expr>& cols) {
    std::vector<Stmt> stores;
    for (int64_t c = 0; c < tile; ++c) {
      std::vector<Expr> idx = out_base;
      idx[ax.a] = idx[ax.a] + Expr(c);
      idx[ax.j] = ir::make_ramp(out_base[ax.j], 1, lanes);
      if (!masked) {
        stores.push_back(ir::make_store(y, cols[c], idx));
        continue;
      }
      stores.push_back(
          ir::make_if(idx[ax.a] < Expr(s.out[ax.a]), ir::make_store(y, cols[c], idx, j_lanes)));
    }
    return ir::make_seq(stores);
  });
}

// Whole tiles unmasked; where an extent is not a multiple of the tile, the tiles at its end
// masked.
Stmt tile_or_partial(const te::TensorizeRegion& r, const TransposeShape& s, int64_t tile,
                     bool partial) {
  if (!partial) return tile_body(r, s, tile, false);
  const TileAxes ax = tile_axes(s);
  Expr fits = r.output_base[ax.a] + Expr(tile - 1) < Expr(s.out[ax.a]) &&
              r.output_base[ax.j] + Expr(tile - 1) < Expr(s.out[ax.j]);
  return ir::make_if(fits, tile_body(r, s, tile, false), tile_body(r, s, tile, true));
}

class TransposeShuffle : public OpTemplate {
 public:
  std::string name() const override { return "transpose.shuffle"; }
  std::string op() const override { return "transpose"; }
  bool applies(const Workload& w, const Target& t) const override {
    const std::vector<DataType> types = dtypes();
    if (w.op != op() || std::find(types.begin(), types.end(), w.dtype) == types.end()) return false;
    try {
      const TransposeShape s = transpose_shape(w);
      const TileAxes ax = tile_axes(s);
      const int64_t tile = tile_edge(t);
      return ax.a != ax.j && s.out[ax.a] >= tile && s.out[ax.j] >= tile;
    } catch (const UserError&) {
      return false;  // transpose.tiled reports what is wrong with the workload
    }
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    transpose_shape(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    // 0: the tiles along the output's innermost dimension inside those along `a`; 1: the
    // other way round (which side's rows stay in cache between neighbouring tiles).
    cs.define_knob("order", {0, 1});
    cs.define_knob("block", {1, 2, 4});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    int64_t elements = 1;
    for (int64_t d : transpose_shape(w).out) elements *= d;
    return Config(
        {{"parallel", copy_worth_threads(elements, w.dtype) ? 1 : 0}, {"order", 1}, {"block", 2}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"X", transpose_shape(w).in}};
  }
  TensorSpec output(const Workload& w) const override { return {"Y", transpose_shape(w).out}; }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    return transpose_reference(transpose_shape(w), in[0]);
  }
  std::vector<DataType> dtypes() const override {
    return {DataType::f32(), DataType::f16(), DataType::bf16()};
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    user_check(applies(w, t)) << name() << " needs a transpose that moves the innermost "
                              << "dimension, with both tile dimensions of at least " << tile_edge(t)
                              << " elements; got " << w.str()
                              << " (transpose.tiled takes any transpose)";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const TransposeShape s = transpose_shape(w);
    const TileAxes ax = tile_axes(s);
    const size_t n = s.in.size();
    const int64_t tile = tile_edge(t);
    auto [x, y] = transpose_compute(s, w.dtype);
    te::Schedule sch({y});
    te::Stage out = sch[y];
    // The loops outside the tiles with their extents, in output order; then the blocks of
    // `block` x `block` tiles (both sides' rows stay in cache across a block, and each row is
    // read or written in runs of `block` vectors); then the tiles in a block; then the tile.
    std::vector<std::pair<ir::IterVar, int64_t>> loops;
    for (size_t i = 0; i < n; ++i)
      if (i != ax.a && i != ax.j) loops.emplace_back(out.axis(i), s.out[i]);
    auto [ao, ai] = out.split(out.axis(ax.a), tile);
    auto [jo, ji] = out.split(out.axis(ax.j), tile);
    const int64_t block = cfg["block"];
    std::pair<ir::IterVar, int64_t> a_blocks{ao, ceil_div(s.out[ax.a], tile)},
        j_blocks{jo, ceil_div(s.out[ax.j], tile)};
    std::vector<ir::IterVar> in_block;
    if (block > 1) {
      auto [aoo, aoi] = out.split(ao, block);
      auto [joo, joi] = out.split(jo, block);
      a_blocks = {aoo, ceil_div(a_blocks.second, block)};
      j_blocks = {joo, ceil_div(j_blocks.second, block)};
      in_block = cfg["order"] == 0 ? std::vector<ir::IterVar>{aoi, joi}
                                   : std::vector<ir::IterVar>{joi, aoi};
    }
    if (cfg["order"] == 0) {
      loops.push_back(a_blocks), loops.push_back(j_blocks);
    } else {
      loops.push_back(j_blocks), loops.push_back(a_blocks);
    }
    std::vector<ir::IterVar> order;
    for (const auto& [iv, extent] : loops) order.push_back(iv);
    order.insert(order.end(), in_block.begin(), in_block.end());
    order.push_back(ai), order.push_back(ji);
    out.reorder(order);
    if (cfg["parallel"]) {
      // The first loop of more than one iteration: a batch of 1 would leave a single task.
      for (const auto& [iv, extent] : loops)
        if (extent > 1) {
          out.parallel(iv);
          break;
        }
    }
    const bool partial = s.out[ax.a] % tile != 0 || s.out[ax.j] % tile != 0;
    te::TensorIntrin intrin;
    intrin.name = "transpose_tile";
    intrin.extents = {tile, tile};
    intrin.guards_partial_tiles = partial;
    intrin.emit = [s, tile, partial](const te::TensorizeRegion& r) {
      return tile_or_partial(r, s, tile, partial);
    };
    out.tensorize(ai, std::move(intrin));
    int64_t elements = 1;
    for (int64_t d : s.out) elements *= d;
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(elements));
  }
};

}  // namespace

const OpTemplate& transpose_shuffle_template() {
  static const TransposeShuffle t;
  return t;
}

}  // namespace kiln::schedules
