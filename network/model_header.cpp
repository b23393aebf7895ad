// model_header.h: C text, plain macros and comments, so C and C++ programs both include it.
#include "network/model_header.h"

#include <cctype>
#include <cstdio>

namespace kiln::network {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string hex64(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llxull", static_cast<unsigned long long>(v));
  return text;
}

// A C string literal of a name that may hold quotes or backslashes (ONNX names are free text).
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A name fit for a /* comment */: no "*/" inside.
std::string comment_safe(std::string s) {
  for (size_t at = s.find("*/"); at != std::string::npos; at = s.find("*/")) s.replace(at, 2, "*_/");
  return s;
}

void describe(std::string& out, const std::string& prefix, const char* kind, size_t index,
              const codegen::TensorSpec& t) {
  std::string dims, shape;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (d > 0) {
      dims += ", ";
      shape += 'x';
    }
    dims += std::to_string(t.shape[d]);
    shape += std::to_string(t.shape[d]);
  }
  const std::string p = prefix + "_" + upper(kind) + "_" + std::to_string(index);
  out += "/* " + std::string(kind) + " " + std::to_string(index) + ": '" + comment_safe(t.name) +
         "', " + t.dtype.str() + " [" + (shape.empty() ? "scalar" : shape) + "] */\n";
  out += "#define " + p + "_NAME " + c_string(t.name) + "\n";
  out += "#define " + p + "_DTYPE \"" + t.dtype.str() + "\"\n";
  out += "#define " + p + "_RANK " + std::to_string(t.shape.size()) + "\n";
  if (!t.shape.empty()) out += "#define " + p + "_SHAPE { " + dims + " }\n";
  out += "#define " + p + "_BYTES " + std::to_string(codegen::tensor_bytes(t)) + "ull\n";
}

}  // namespace

std::string model_header_text(const codegen::ExecutorPlan& plan, const std::string& target_name) {
  const std::string entry = codegen::static_entry_symbol(plan.name);
  const std::string prefix = upper(entry);
  std::string out;
  out += "/* model.h: model '" + comment_safe(plan.name) + "', compiled by kiln for target " +
         target_name + ".\n";
  out += R"( *
 * Link model.a and the runtime (libkiln_rt.a, -lpthread -ldl) into the application, then pair
 * the model with the model.params written beside this header:
 *
 *   kiln_model* m = NULL;
 *   if (kiln_model_load_static(&)" + entry + R"(, "model.params", 0, &m) != KILN_OK)
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *   kiln_model_run(m, inputs, outputs);   (one pointer per input / output, in the order below)
 *   kiln_model_free(m);
 *
 * (C++: kiln::Model::load_static()" + entry + R"(, "model.params").) Loading checks that the
 * params file is intact and is the one this model was built with (its size and checksum below),
 * and that this CPU has the instructions the target needs. Generated: do not edit.
 */
)";
  out += "#ifndef " + prefix + "_H\n#define " + prefix + "_H\n\n";
  out += "#include \"kiln/kernel_abi.h\"\n#include \"kiln/runtime_c.h\"\n\n";
  out += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  out += "extern const kiln_model_entry " + entry + ";\n\n";
  out += "#define " + prefix + "_NAME " + c_string(plan.name) + "\n";
  out += "#define " + prefix + "_TARGET \"" + target_name + "\"\n";
  out += "#define " + prefix + "_PARAMS_BYTES " + std::to_string(plan.params_bytes) + "ull\n";
  out += "#define " + prefix + "_PARAMS_CHECKSUM " + hex64(plan.params_checksum) + "\n";
  out += "#define " + prefix + "_WORKSPACE_BYTES " + std::to_string(plan.workspace_bytes) + "ull\n";
  out += "#define " + prefix + "_NUM_INPUTS " + std::to_string(plan.inputs.size()) + "\n";
  out += "#define " + prefix + "_NUM_OUTPUTS " + std::to_string(plan.outputs.size()) + "\n\n";
  if (plan.batch.max > 0) {
    out += "/* A ranged batch: the shapes below are one sample's. A run of b samples (MIN_BATCH <= b\n"
           " * <= MAX_BATCH, kiln_model_run_shaped) takes b times as many along axis 0 of every output\n"
           " * and of each input whose _BATCHED is 1. */\n";
    out += "#define " + prefix + "_MIN_BATCH " + std::to_string(plan.batch.min) + "\n";
    out += "#define " + prefix + "_MAX_BATCH " + std::to_string(plan.batch.max) + "\n";
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      out += "#define " + prefix + "_INPUT_" + std::to_string(i) + "_BATCHED " +
             (plan.batch.batched_inputs.at(i) ? "1" : "0") + "\n";
    out += "\n";
  }
  for (size_t i = 0; i < plan.inputs.size(); ++i) describe(out, prefix, "input", i, plan.inputs[i]);
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    describe(out, prefix, "output", i, plan.outputs[i]);
  out += "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out;
}

}  // namespace kiln::network
