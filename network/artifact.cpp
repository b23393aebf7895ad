#include "network/artifact.h"

#include <filesystem>
#include <system_error>

#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "compiler/codegen/archive.h"
#include "compiler/codegen/executor.h"
#include "compiler/codegen/link.h"
#include "network/model_header.h"
#include "kiln/params.h"
#include "runtime/process/file_bytes.h"
#include "tuner/builder.h"

namespace kiln::network {

namespace fs = std::filesystem;

namespace {

codegen::StepArg step_arg(const Buffer& b) {
  switch (b.kind) {
    case BufferKind::Input: return codegen::input_arg(b.index);
    case BufferKind::Output: return codegen::output_arg(b.index);
    case BufferKind::Params: return codegen::params_arg(b.offset);
    case BufferKind::Workspace: return codegen::workspace_arg(b.offset);
  }
  return {};
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isspace(static_cast<unsigned char>(c)) ? '_' : c;
  return out;
}

codegen::ExecutorPlan executor_plan(const NetworkProgram& p, const std::string& name) {
  codegen::ExecutorPlan plan;
  plan.name = safe_name(name);
  for (size_t i = 0; i < p.input_names.size(); ++i)
    plan.inputs.push_back({safe_name(p.input_names[i]), p.input_dtypes[i], p.input_shapes[i]});
  for (size_t i = 0; i < p.output_names.size(); ++i)
    plan.outputs.push_back({safe_name(p.output_names[i]), p.output_dtypes[i], p.output_shapes[i]});
  plan.workspace_bytes = p.workspace_bytes;
  plan.params_bytes = p.params.size();
  plan.params_checksum = params_checksum(p.params.data(), p.params.size());
  plan.batch = p.batch;
  auto steps_of = [&](const std::vector<Step>& steps) {
    std::vector<codegen::ExecutorStep> out;
    for (const Step& s : steps) {
      codegen::ExecutorStep step{p.tasks[s.task].kernel, {}};
      for (int b : s.args) step.args.push_back(step_arg(p.buffers[b]));
      out.push_back(std::move(step));
    }
    return out;
  };
  plan.steps = steps_of(p.steps);
  for (const NetworkProgram::BatchClass& c : p.batch_classes)
    plan.batch_classes.push_back({c.batch, steps_of(c.steps)});
  return plan;
}

void write_text(const fs::path& path, const std::string& text) {
  try {
    write_file_bytes(path.string(), text);
  } catch (const std::system_error& e) {
    user_error() << e.what();
  }
}

}  // namespace

const std::vector<std::string>& artifact_files() {
  static const std::vector<std::string> files = {"model.so", "model.params", "model.json",
                                                 "model.a", "model.h"};
  return files;
}

void write_artifact(const NetworkProgram& p, const Target& target, const std::string& name,
                    const std::string& description, const std::string& dir) {
  // Older kilns built inside the model folder and left DIR/.kiln-compile.PID when killed:
  // gone before the swap, so the new folder does not keep them as a user's entries.
  std::error_code ec;
  if (fs::is_directory(dir, ec)) remove_stale_temporaries(dir, ".kiln-compile.");
  FolderReplacement r{dir, "the output folder", "kiln-compile", artifact_files()};
  replace_folder(r, [&](const std::string& tmp_dir) {
    const fs::path tmp(tmp_dir);
    std::vector<ir::LoweredFunc> kernels;
    for (const Task& t : p.tasks)
      kernels.push_back(
          tuner::lower_template(*t.tpl, t.workload, target, t.config, t.kernel).func);
    codegen::ExecutorPlan plan = executor_plan(p, name);
    // One optimisation of the whole model gives both the .so and model.a's object.
    std::vector<uint8_t> static_object;
    const codegen::CompiledModule so =
        codegen::compile_model(kernels, plan, target, {}, &static_object);
    codegen::link_shared_object({so.object}, (tmp / "model.so").string());
    codegen::write_static_archive({{"model.o", std::move(static_object)}},
                                  (tmp / "model.a").string());
    write_text(tmp / "model.h", model_header_text(plan, target.name));
    write_params_file((tmp / "model.params").string(), p.params.data(), p.params.size());
    write_text(tmp / "model.json", description);
  });
}

}  // namespace kiln::network
