// The frame the flat 8-bit maps share (quantize.flat, dequantize.flat, qlinear_add.flat): a
// u8 or i8 workload of `elements` values in any layout, one knob (parallel) and its default,
// an output of `elements`. Each map adds its name, inputs, reference and loop.
#pragma once

#include "schedules/elementwise/cast.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

class FlatInt8Template : public OpTemplate {
 public:
  std::vector<ir::DataType> dtypes() const override {
    return {ir::DataType::u8(), ir::DataType::i8()};
  }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == op() && (w.dtype == ir::DataType::u8() || w.dtype == ir::DataType::i8());
  }
  ConfigSpace space(const Workload&, const Target&) const override {
    return flat_conversion_space();
  }
  Config fallback(const Workload& w, const Target&) const override {
    return flat_conversion_fallback(w);
  }
  TensorSpec output(const Workload& w) const override { return {"Y", {w.param("elements")}}; }
};

}  // namespace kiln::schedules
