#include "schedules/dense/amx.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/amx_tile.h"
#include "schedules/dense/lowp.h"
#include "schedules/epilogue.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

int64_t padded_k(int64_t k) {
  return ceil_div(k, kAmxKStep) * kAmxKStep;
}

class DenseBf16Amx final : public OpTemplate {
 public:
  std::string name() const override { return "dense.bf16.amx"; }
  std::string op() const override { return "dense"; }
  std::vector<std::string> epilogues() const override { return epilogue_names(); }
  std::vector<DataType> dtypes() const override { return {DataType::bf16()}; }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return dense_packed_template().inputs(w);
  }
  TensorSpec output(const Workload& w) const override { return dense_packed_template().output(w); }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    return dense_packed_template().reference(w, in);
  }

  bool applies(const Workload& w, const Target& t) const override {
    return w.op == "dense" && w.dtype == DataType::bf16() && has_amx_bf16(t);
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    ConfigSpace cs;
    // C tiles of 16x16 f32 per block: up to 2x2 (4 C + 2 A + 2 B = the 8 tile registers).
    cs.define_knob("row_tiles", s.m > kAmxTileRows ? std::vector<int64_t>{1, 2}
                                                   : std::vector<int64_t>{1});
    cs.define_knob("col_tiles", s.n > kAmxTileRows ? std::vector<int64_t>{1, 2}
                                                   : std::vector<int64_t>{1});
    cs.define_knob("panels_outer", {0, 1});
    cs.define_knob("parallel", {0, 1, 2});  // serial, outer loop, second loop (DenseTiling)
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    // 2x2 tiles: each A and B tile loaded per K step serves two tdpbf16ps.
    return Config({{"row_tiles", s.m > kAmxTileRows ? 2 : 1},
                   {"col_tiles", s.n > kAmxTileRows ? 2 : 1},
                   {"panels_outer", 1},
                   {"parallel", worth_parallel(s.flops()) ? 1 : 0}});
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    dense_shape(w);
    user_check(applies(w, t)) << name() << ": " << w.str() << " on target " << t.name
                              << " is not supported (needs dtype bf16 and an x86 target with "
                                 "+amx-tile and +amx-bf16, e.g. host on a Sapphire Rapids CPU)";
  }

  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    const DenseShape s = dense_shape(w);
    const int64_t mt = cfg["row_tiles"], nt = cfg["col_tiles"];
    const int64_t mr = mt * kAmxTileRows, nr = nt * kAmxTileRows;
    const int64_t kp = padded_k(s.k), panels = ceil_div(s.n, nr);
    const int64_t mp = ceil_div(s.m, mr) * mr, np = panels * nr;
    const DataType f32 = DataType::f32(), bf16 = DataType::bf16();
    const DataType out_t = w.param_or("out_f32", 0) != 0 ? f32 : w.dtype;

    te::Tensor a = te::placeholder({s.m, s.k}, bf16, "A");
    te::Tensor b = te::placeholder({panels, kp / 2, nr * 2}, bf16, "B.amx");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {s.m, s.n});
    // Tile loads read whole 16-row, 32-K blocks: a copy padded with zeros unless A is one.
    const bool pad = mp != s.m || kp != s.k;
    te::Tensor ap = a;
    if (pad)
      ap = te::compute(
          {mp, kp},
          [&](Var i, Var k) {
            Expr v = a(ir::min(i, Expr(s.m - 1)), ir::min(k, Expr(s.k - 1)));
            return ir::make_select(i < Expr(s.m) && k < Expr(s.k), v, ir::make_zero(bf16));
          },
          "A.amx");
    // K as steps of 32 (one tile row of A) and the 32 values of a step.
    ir::IterVar ks = te::reduce_axis(kp / kAmxKStep, "ks"), kv = te::reduce_axis(kAmxKStep, "kv");
    te::Tensor acc = te::compute(
        {mp, np},
        [&](Var i, Var j) {
          Expr k = ks->var * kAmxKStep + kv->var;
          Expr av = ir::make_cast(f32, ap(i, k));
          Expr bv = ir::make_cast(f32, b(j / nr, k / 2, (j % nr) * 2 + k % 2));
          return te::sum(av * bv, {ks, kv});
        },
        "C.acc");
    te::Tensor c = te::compute(
        {s.m, s.n},
        [&](Var i, Var j) {
          return ir::make_cast(out_t, apply_epilogue(w, ep, acc(i, j), {i, j}, j));
        },
        "C");

    te::Schedule sch({c});
    if (pad) {
      te::Stage copy = sch[ap];
      auto [ko, ki] = copy.split(copy.axis(1), kAmxKStep);
      (void)ko;
      copy.vectorize(ki);
    }
    DenseTiling tiling = dense_tiling(cfg, mr, nr, kAmxTileRows);
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, acc, c, at, tiling, {ks, kv});
    sch[acc].tensorize(ks, gemm_tile(mt, nt, kp / kAmxKStep));

    auto pack = [s, nr, kp](const Values& v) { return pack_dense_b_vnni(s, nr, v.data(), kp / 2); };
    return finish_dense(*this, w, std::move(sch), a, b, ep, c, pack, panels * kp * nr);
  }

 private:
  // The whole K loop of one block, the operands' first rows from the region's bases.
  static te::TensorIntrin gemm_tile(int64_t mt, int64_t nt, int64_t k_steps) {
    return amx_gemm_bf16_tile({mt, nt, {k_steps}}, [](const te::TensorizeRegion& r) {
      internal_check(r.inputs.size() == 2 && r.output_base.size() == 2)
          << "dense.bf16.amx: unexpected region";
      const auto& [a, a_base] = r.inputs[0];
      const auto& [b, b_base] = r.inputs[1];
      internal_check(b->name == "B.amx" && a_base.size() == 2 && b_base.size() == 3)
          << "dense.bf16.amx: expects A then B.amx";
      AmxOperands ops;
      ops.c_row = [out = r.output, base = r.output_base](int64_t row) {
        return ir::make_load(out, {base[0] + Expr(row), base[1]});
      };
      // Step s of K: A moves 32 values along its row, B 16 VNNI rows down its panel.
      ops.a_row = [a, a_base](const StepIndex& at, int64_t row) {
        return ir::make_load(a, {a_base[0] + Expr(row), a_base[1] + Expr(at[0] * kAmxKStep)});
      };
      ops.b_row = [b, b_base](const StepIndex& at, int64_t row) {
        return ir::make_load(
            b, {b_base[0], b_base[1] + Expr(at[0] * kAmxKStep / 2 + row), b_base[2]});
      };
      return ops;
    });
  }
};

}  // namespace

const OpTemplate& dense_bf16_amx_template() {
  static const DenseBf16Amx t;
  return t;
}

}  // namespace kiln::schedules
