#include "schedules/dense/int8_base.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/dense/lowp.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

std::vector<TensorSpec> DenseInt8Base::inputs(const Workload& w) const {
  const DenseShape s = dense_shape(w);
  std::vector<TensorSpec> in = {{"A", {s.m, s.k}}, {"B", {s.k, s.n}}};
  if (w.has_epilogue("bias")) in.push_back({"bias", {s.n}});
  if (int8_output_type(w) != ir::DataType::i32()) in.push_back({"scale", {s.n}});
  return in;
}

TensorSpec DenseInt8Base::output(const Workload& w) const {
  const DenseShape s = dense_shape(w);
  return {"C", {s.m, s.n}};
}

Values DenseInt8Base::reference(const Workload& w, const std::vector<Values>& in) const {
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

ConfigSpace DenseInt8Base::space(const Workload& w, const Target&) const {
  const DenseShape s = dense_shape(w);
  ConfigSpace cs;
  cs.define_knob("mr", row_tile_choices(s.m, {1, 2, 3, 4, 6, 8}));
  cs.define_knob("nr_vecs", {1, 2, 3, 4});
  cs.define_knob("k_unroll", {1, 2, 4});  // K groups (pairs or quads) per loop iteration
  cs.define_knob("panels_outer", {0, 1});
  cs.define_knob("parallel", {0, 1, 2});
  return cs;
}

Config DenseInt8Base::tile_fallback(const Workload& w, int64_t lanes) {
  const DenseShape s = dense_shape(w);
  const int64_t want_rows = lanes == 16 ? 6 : 4, want_vecs = lanes == 8 ? 2 : 4;
  const int64_t mr = fit_rows(want_rows, s.m, {8, 6, 4, 3, 2, 1});
  const int64_t vecs = std::min(want_vecs, ceil_div(s.n, lanes));
  return Config({{"mr", mr},
                 {"nr_vecs", vecs},
                 {"k_unroll", 2},
                 {"panels_outer", 1},
                 {"parallel", worth_parallel(s.flops()) ? 1 : 0}});
}

ScheduledKernel DenseInt8Base::schedule_stages(const Workload& w, const Config& cfg,
                                               const Stages& st, int64_t lanes, int64_t copy_lanes,
                                               te::TensorIntrin tile) const {
  const DenseShape s = dense_shape(w);
  const int64_t mr = cfg["mr"], nr = cfg["nr_vecs"] * lanes;
  te::Schedule sch({st.c});
  te::Stage copy = sch[st.a_copy];
  auto [outer, inner] = copy.split(copy.axis(1), copy_lanes);
  copy.vectorize(inner);
  DenseTiling tiling = dense_tiling(cfg, mr, nr, lanes);
  tiling.k_unroll = 1;
  tiling.unroll_tile = true;
  ir::IterVar at = schedule_dense_output(sch, st.c, tiling);
  schedule_dense_tile(sch, st.acc, st.c, at, tiling, st.reduce);
  sch[st.acc].tensorize(st.reduce.at(0), std::move(tile));

  std::vector<te::Tensor> tensors = {st.a, st.b};
  if (st.bias.defined()) tensors.push_back(st.bias);
  if (st.scale.defined()) tensors.push_back(st.scale);
  tensors.push_back(st.c);
  return logical_kernel(std::move(sch), std::move(tensors), inputs(w), output(w), s.flops());
}

bool DenseInt8Base::is_int8_dense(const Workload& w) {
  return w.op == "dense" && (w.dtype == ir::DataType::u8() || w.dtype == ir::DataType::i8());
}

void DenseInt8Base::check(const Workload& w, const Target& t) const {
  requantize_params(w);
  user_check(t.is_x86() || t.is_aarch64())
      << name() << ": target " << t.name << " is neither x86-64 nor AArch64";
}

}  // namespace kiln::schedules
