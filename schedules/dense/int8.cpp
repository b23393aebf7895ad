#include "schedules/dense/int8.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/dense/lowp.h"
#include "schedules/intrinsics.h"
#include "schedules/parallel_rule.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

class DenseInt8 final : public OpTemplate {
 public:
  std::string name() const override { return "dense.int8"; }
  std::string op() const override { return "dense"; }
  std::vector<DataType> dtypes() const override { return {DataType::u8(), DataType::i8()}; }
  std::vector<std::string> epilogues() const override { return {"bias"}; }
  std::vector<std::string> value_params() const override { return requantize_value_params(); }

  bool applies(const Workload& w, const Target& t) const override {
    return w.op == "dense" && (w.dtype == DataType::u8() || w.dtype == DataType::i8()) &&
           (t.is_x86() || t.is_aarch64());
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    const DenseShape s = dense_shape(w);
    std::vector<TensorSpec> in = {{"A", {s.m, s.k}}, {"B", {s.k, s.n}}};
    if (w.has_epilogue("bias")) in.push_back({"bias", {s.n}});
    if (int8_output_type(w) != DataType::i32()) in.push_back({"scale", {s.n}});
    return in;
  }
  TensorSpec output(const Workload& w) const override {
    const DenseShape s = dense_shape(w);
    return {"C", {s.m, s.n}};
  }

  // Exact: the sums are integers (held exactly in double), the requantization is computed
  // in f32 as the kernel and ONNX Runtime compute it.
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const DenseShape s = dense_shape(w);
    const Requantize r = requantize_params(w);
    const Values &a = in.at(0), &b = in.at(1);
    size_t next = 2;
    const Values* bias = w.has_epilogue("bias") ? &in.at(next++) : nullptr;
    const Values* scale = r.requantize ? &in.at(next++) : nullptr;
    Values c(static_cast<size_t>(s.m * s.n));
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        // Exact in double; the kernel's int32 sum wraps past 2^31 (as ONNX's does).
        double sum = bias ? double((*bias)[j]) : 0.0;
        for (int64_t k = 0; k < s.k; ++k)
          sum += (double(a[i * s.k + k]) - double(r.a_zero)) * double(b[k * s.n + j]);
        c[i * s.n + j] = requantize_reference(r, sum, scale ? (*scale)[j] : 1.0f);
      }
    return c;
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    const DenseShape s = dense_shape(w);
    ConfigSpace cs;
    cs.define_knob("mr", row_tile_choices(s.m, {1, 2, 3, 4, 6, 8}));
    cs.define_knob("nr_vecs", {1, 2, 3, 4});
    cs.define_knob("k_unroll", {1, 2, 4});  // K pairs per loop iteration
    cs.define_knob("panels_outer", {0, 1});
    cs.define_knob("parallel", {0, 1, 2});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const DenseShape s = dense_shape(w);
    const int64_t lanes = pair_dot_i16_lanes(t);
    // Accumulators + B vectors + the broadcast (+ the product without VNNI) within the
    // register file: AVX2 4 x 2 of 16 ymm; AVX-512 6 x 4 of 32 zmm; NEON 4 x 4 of 32.
    const int64_t want_rows = lanes == 16 ? 6 : 4, want_vecs = lanes == 8 ? 2 : 4;
    const int64_t mr = fit_rows(want_rows, s.m, {8, 6, 4, 3, 2, 1});
    const int64_t vecs = std::min(want_vecs, ceil_div(s.n, lanes));
    return Config({{"mr", mr},
                   {"nr_vecs", vecs},
                   {"k_unroll", 2},
                   {"panels_outer", 1},
                   {"parallel", worth_parallel(s.flops()) ? 1 : 0}});
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    requantize_params(w);
    user_check(t.is_x86() || t.is_aarch64())
        << name() << ": target " << t.name << " is neither x86-64 nor AArch64";
  }

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

    te::Schedule sch({c});
    te::Stage widen = sch[a16];
    auto [wo, wi] = widen.split(widen.axis(1), 2 * lanes);
    widen.vectorize(wi);
    DenseTiling tiling = dense_tiling(cfg, mr, nr, lanes);
    tiling.k_unroll = 1;
    tiling.unroll_tile = true;
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, acc, c, at, tiling, {k2, kk});
    sch[acc].tensorize(k2, pair_tile(s, t, mr, cfg["nr_vecs"], lanes, pairs, cfg["k_unroll"]));

    std::vector<te::Tensor> tensors = {a, b};
    if (with_bias) tensors.push_back(bias);
    if (r.requantize) tensors.push_back(scale);
    tensors.push_back(c);
    ScheduledKernel k =
        logical_kernel(std::move(sch), std::move(tensors), inputs(w), output(w), s.flops());
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
