#include "tools/precision_args.h"

#include "compiler/base/error.h"

namespace kiln::tools {

void add_keep_last_flag(CLI::App& cmd, bool& keep_last_f32) {
  cmd.add_flag("--keep-last-f32,!--no-keep-last-f32", keep_last_f32,
               "With --dtype bf16|f16: keep the last conv/dense layers (the logits) in f32 "
               "(default; --no-keep-last-f32 lowers them too)");
}

network::PrecisionOptions precision_options(const std::string& dtype, bool keep_last_f32) {
  network::PrecisionOptions o;
  o.keep_last_f32 = keep_last_f32;
  if (dtype == "f32") return o;
  // kiln compile handles int8 itself (quantizing first); elsewhere the quantized model is the
  // input, as `kiln quantize` writes it.
  user_check(dtype != "int8") << "--dtype int8: give this command the quantized model "
                                 "instead (kiln quantize MODEL.onnx --calibration DIR -o Q.onnx)";
  user_check(dtype == "bf16" || dtype == "f16")
      << "--dtype '" << dtype << "' is not supported (valid: f32, bf16, f16; kiln compile: int8)";
  o.dtype = ir::parse_data_type(dtype);
  return o;
}

}  // namespace kiln::tools
