#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/dense/int8.h"
#include "schedules/dense/int8_base.h"
#include "schedules/dense/lowp.h"
#include "schedules/intrinsics.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

// The packed B: [N/nr][K/4][nr][4] int8 (each column's four K values adjacent, one 32-bit
// lane of the dot instruction), then per column the int32 zero-point term zero * Σk B[k][j]
// as four bytes, low first: it depends only on B, so it is computed where B is packed.
struct QuadPanels {
  int64_t panels, quads, nr;
  int64_t sums_at() const { return panels * quads * nr * 4; }
  int64_t elements() const { return sums_at() + panels * nr * 4; }
};

Values pack_quad_b(const DenseShape& s, const QuadPanels& q, const Values& b, int64_t zero) {
  Values out(static_cast<size_t>(q.elements()), 0.0f);
  for (int64_t j = 0; j < s.n; ++j) {
    int64_t sum = 0;
    for (int64_t k = 0; k < s.k; ++k) {
      const float v = b[k * s.n + j];
      out[((j / q.nr * q.quads + k / 4) * q.nr + j % q.nr) * 4 + k % 4] = v;
      sum += static_cast<int64_t>(v);
    }
    const auto term = static_cast<uint32_t>(static_cast<int32_t>(zero * sum));
    for (int64_t i = 0; i < 4; ++i)
      out[q.sums_at() + j * 4 + i] = static_cast<float>(static_cast<int8_t>(term >> (8 * i)));
  }
  return out;
}

class DenseInt8Dot final : public DenseInt8Base {
 public:
  std::string name() const override { return "dense.int8.dot"; }

  bool applies(const Workload& w, const Target& t) const override {
    return is_int8_dense(w) && quad_dot_lanes(t) > 0;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    return tile_fallback(w, quad_dot_lanes(t));
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    DenseInt8Base::check(w, t);
    user_check(quad_dot_lanes(t) > 0)
        << name() << ": target " << t.name << " has no byte dot instruction (x86 AVX512-VNNI or "
        << "AVX-VNNI, AArch64 dotprod)";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Requantize r = requantize_params(w);
    const bool with_bias = w.has_epilogue("bias");
    const DenseShape s = dense_shape(w);
    const int64_t lanes = quad_dot_lanes(t), mr = cfg["mr"], nr = cfg["nr_vecs"] * lanes;
    const QuadPanels q{ceil_div(s.n, nr), ceil_div(s.k, 4), nr};
    const int64_t mp = ceil_div(s.m, mr) * mr, np = q.panels * nr;
    const DataType i32 = DataType::i32(), dot_t = quad_dot_data_type(t);
    // The instruction reads A in dot_t: u8 moves to i8 (or back) by 128, its zero point too.
    const int64_t shift = w.dtype == dot_t ? 0 : (dot_t == DataType::u8() ? 128 : -128);
    const int64_t zero = r.a_zero + shift;

    te::Tensor a = te::placeholder({s.m, s.k}, w.dtype, "A");
    te::Tensor b = te::placeholder({q.elements()}, DataType::i8(), "B.quads");
    te::Tensor bias = with_bias ? te::placeholder({s.n}, i32, "bias") : te::Tensor();
    te::Tensor scale =
        r.requantize ? te::placeholder({s.n}, DataType::f32(), "scale") : te::Tensor();
    // A once per call as the instruction reads it, K padded to whole quads (the padding
    // meets zero weights): O(M*K) work before O(M*N*K).
    te::Tensor a4 = te::compute(
        {s.m, q.quads * 4},
        [&](Var i, Var k) {
          Expr v = a(i, ir::min(k, Expr(s.k - 1)));
          if (shift != 0)
            v = ir::make_cast(dot_t, ir::make_cast(DataType::i16(), v) +
                                         ir::make_const(DataType::i16(), double(shift)));
          return ir::make_select(k < Expr(s.k), v, ir::make_const(dot_t, double(zero)));
        },
        "A.quads");
    ir::IterVar k4 = te::reduce_axis(q.quads, "k4"), kk = te::reduce_axis(4, "kk");
    // Whole mr x nr tiles: rows past M read row M-1 and are never stored.
    te::Tensor acc = te::compute(
        {mp, np},
        [&](Var i, Var j) {
          Expr av = ir::make_cast(i32, a4(ir::min(i, Expr(s.m - 1)), k4->var * 4 + kk->var));
          Expr bv = ir::make_cast(
              i32, b(((j / nr) * q.quads + k4->var) * (nr * 4) + (j % nr) * 4 + kk->var));
          return te::sum(av * bv, {k4, kk});
        },
        "C.acc");
    te::Tensor zero_term = te::compute(
        {np},
        [&](Var j) {
          Expr at = Expr(q.sums_at()) + j * 4;
          auto byte = [&](int64_t i) {
            return ir::make_cast(i32, ir::make_cast(DataType::u8(), b(at + Expr(i))));
          };
          return byte(0) + byte(1) * Expr(1 << 8) + byte(2) * Expr(1 << 16) +
                 ir::make_cast(i32, b(at + Expr(3))) * Expr(1 << 24);
        },
        "C.zero_term");
    te::Tensor c = te::compute(
        {s.m, s.n},
        [&](Var i, Var j) {
          Expr sum = acc(i, j) - zero_term(j);
          if (with_bias) sum = sum + bias(j);
          return requantize_expr(r, int8_output_type(w), sum, r.requantize ? scale(j) : Expr());
        },
        "C");

    ScheduledKernel k =
        schedule_stages(w, cfg, {a, b, bias, scale, a4, acc, c, {k4, kk}}, lanes, 4 * lanes,
                        quad_tile(s, t, mr, cfg["nr_vecs"], lanes, q, cfg["k_unroll"]));
    k.args[1].pack = [s, q, zero](const Values& v) { return pack_quad_b(s, q, v, zero); };
    k.args[1].kernel_elements = q.elements();
    return k;
  }

 private:
  // The whole quad loop of an mr x (vecs*lanes) tile, each row broadcasting one 32-bit quad.
  static te::TensorIntrin quad_tile(const DenseShape& s, const Target& t, int64_t mr, int64_t vecs,
                                    int64_t lanes, const QuadPanels& q, int64_t ku) {
    PairDotTile tile{mr, vecs, lanes, q.quads, ku, false, "k4", RemainderKind::Loop};
    PairDotFn dot = [t](Expr acc, Expr a, Expr b) {
      return quad_dot_i8(std::move(acc), std::move(a), std::move(b), t);
    };
    return pair_dot_tile(
        tile, quad_dot_data_type(t), dot, [s, q, vecs, lanes](const te::TensorizeRegion& r) {
          internal_check(r.inputs.size() == 2 && r.inputs[0].first->name == "A.quads" &&
                         r.inputs[1].first->name == "B.quads")
              << "dense.int8.dot: expects A.quads then B.quads";
          const ir::Buffer a = r.inputs[0].first, b = r.inputs[1].first;
          const Expr row0 = r.output_base[0], col0 = r.output_base[1];
          const Expr panel = col0 / (vecs * lanes);
          const int l = static_cast<int>(lanes);
          PairDotOperands ops;
          ops.out = r.output;
          ops.a_pair = [a, row0, s](const Expr& k4, int64_t i) {
            Expr row = ir::min(row0 + Expr(i), Expr(s.m - 1));
            return reinterpret(DataType::i32(),
                               ir::make_load(a, {row, ir::make_ramp(k4 * 4, 1, 4)}));
          };
          ops.b_vector = [b, panel, q, l](const Expr& k4, int64_t v) {
            Expr base = (panel * q.quads + k4) * (q.nr * 4) + Expr(v * 4 * l);
            return ir::make_load(b, {ir::make_ramp(base, 1, 4 * l)});
          };
          ops.out_index = [row0, col0, l](int64_t i, int64_t v) {
            return std::vector<Expr>{row0 + Expr(i), ir::make_ramp(col0 + Expr(v * l), 1, l)};
          };
          return ops;
        });
  }
};

}  // namespace

const OpTemplate& dense_int8_dot_template() {
  static const DenseInt8Dot t;
  return t;
}

}  // namespace kiln::schedules
