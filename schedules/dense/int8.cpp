#include "schedules/dense/int8.h"

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/dense/int8_base.h"
#include "schedules/dense/lowp.h"
#include "schedules/intrinsics.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

class DenseInt8 final : public DenseInt8Base {
 public:
  std::string name() const override { return "dense.int8"; }

  bool applies(const Workload& w, const Target& t) const override {
    return is_int8_dense(w) && (t.is_x86() || t.is_aarch64());
  }

  Config fallback(const Workload& w, const Target& t) const override {
    return tile_fallback(w, pair_dot_i16_lanes(t));
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Requantize r = requantize_params(w);
    const bool with_bias = w.has_epilogue("bias");
    const DenseShape s = dense_shape(w);
    const int64_t lanes = pair_dot_i16_lanes(t), mr = cfg["mr"], nr = cfg["nr_vecs"] * lanes;
    const int64_t pairs = ceil_div(s.k, 2), panels = ceil_div(s.n, nr);
    const int64_t mp = ceil_div(s.m, mr) * mr, np = panels * nr;
    const DataType i16 = DataType::i16(), i32 = DataType::i32();

    te::Tensor a = te::placeholder({s.m, s.k}, w.dtype, "A");
    te::Tensor b = te::placeholder({panels, pairs, nr * 2}, i16, "B.pairs");
    te::Tensor bias = with_bias ? te::placeholder({s.n}, i32, "bias") : te::Tensor();
    te::Tensor scale =
        r.requantize ? te::placeholder({s.n}, DataType::f32(), "scale") : te::Tensor();
    // A once per call in i16, zero point subtracted, K padded with zeros to whole pairs:
    // O(M*K) work before O(M*N*K), and each tile row then broadcasts one 32-bit pair.
    te::Tensor a16 = te::compute(
        {s.m, pairs * 2},
        [&](Var i, Var k) {
          Expr v = ir::make_cast(i16, a(i, ir::min(k, Expr(s.k - 1)))) -
                   ir::make_const(i16, double(r.a_zero));
          return ir::make_select(k < Expr(s.k), v, ir::make_zero(i16));
        },
        "A.i16");
    ir::IterVar k2 = te::reduce_axis(pairs, "k2"), kk = te::reduce_axis(2, "kk");
    // Whole mr x nr tiles: rows past M read row M-1 and are never stored.
    te::Tensor acc = te::compute(
        {mp, np},
        [&](Var i, Var j) {
          Expr av = ir::make_cast(i32, a16(ir::min(i, Expr(s.m - 1)), k2->var * 2 + kk->var));
          Expr bv = ir::make_cast(i32, b(j / nr, k2, (j % nr) * 2 + kk->var));
          return te::sum(av * bv, {k2, kk});
        },
        "C.acc");
    te::Tensor c = te::compute(
        {s.m, s.n},
        [&](Var i, Var j) {
          Expr sum = with_bias ? acc(i, j) + bias(j) : acc(i, j);
          return requantize_expr(r, int8_output_type(w), sum, r.requantize ? scale(j) : Expr());
        },
        "C");

    ScheduledKernel k =
        schedule_stages(w, cfg, {a, b, bias, scale, a16, acc, c, {k2, kk}}, lanes, 2 * lanes,
                        pair_tile(s, t, mr, cfg["nr_vecs"], lanes, pairs, cfg["k_unroll"]));
    k.args[1].pack = [s, nr](const Values& v) { return pack_dense_b_vnni(s, nr, v.data()); };
    k.args[1].kernel_elements = panels * pairs * nr * 2;
    k.args[1].logical_dtype = DataType::i8();  // int8 weights, held as i16 in the kernel
    return k;
  }

 private:
  // The whole pair loop of an mr x (vecs*lanes) tile, A.i16 broadcasting one 32-bit pair.
  static te::TensorIntrin pair_tile(const DenseShape& s, const Target& t, int64_t mr, int64_t vecs,
                                    int64_t lanes, int64_t pairs, int64_t ku) {
    PairDotTile tile{mr, vecs, lanes, pairs, ku, false, "k2", RemainderKind::Loop};
    PairDotFn dot = [t](Expr acc, Expr a, Expr b) {
      return pair_dot_i16(std::move(acc), std::move(a), std::move(b), t);
    };
    return pair_dot_tile(
        tile, DataType::i16(), dot, [s, vecs, lanes](const te::TensorizeRegion& r) {
          internal_check(r.inputs.size() == 2 && r.inputs[0].first->name == "A.i16" &&
                         r.inputs[1].first->name == "B.pairs")
              << "dense.int8: expects A.i16 then B.pairs";
          const ir::Buffer a = r.inputs[0].first, b = r.inputs[1].first;
          const Expr row0 = r.output_base[0], col0 = r.output_base[1];
          const Expr panel = col0 / (vecs * lanes);
          const int l = static_cast<int>(lanes);
          PairDotOperands ops;
          ops.out = r.output;
          ops.a_pair = [a, row0, s](const Expr& k2, int64_t i) {
            Expr row = ir::min(row0 + Expr(i), Expr(s.m - 1));
            return reinterpret(DataType::i32(),
                               ir::make_load(a, {row, ir::make_ramp(k2 * 2, 1, 2)}));
          };
          ops.b_vector = [b, panel, l](const Expr& k2, int64_t v) {
            return ir::make_load(b, {panel, k2, ir::make_ramp(Expr(v * 2 * l), 1, 2 * l)});
          };
          ops.out_index = [row0, col0, l](int64_t i, int64_t v) {
            return std::vector<Expr>{row0 + Expr(i), ir::make_ramp(col0 + Expr(v * l), 1, l)};
          };
          return ops;
        });
  }
};

}  // namespace

const OpTemplate& dense_int8_template() {
  static const DenseInt8 t;
  return t;
}

}  // namespace kiln::schedules
