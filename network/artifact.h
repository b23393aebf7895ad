// Writing a compiled network: every unique kernel lowered once (tuner's builder), the AOT
// executor plan of the program's steps, and the files of the model directory (model.so,
// model.params, model.json; model.a + model.h to link the model statically). The model is
// built in a temporary folder beside `dir` (PARENT/.NAME.kiln-compile.PID) and swapped in
// with one rename (base/output_paths.h: replace_folder), so `dir` is at every moment the
// whole old model or the whole new one; a failed compile leaves `dir` as it was (absent when
// it was), and the user's other files in `dir` (kiln run's outputs/, a report) survive.
#pragma once

#include <string>
#include <vector>

#include "network/network_program.h"
#include "compiler/target/target.h"

namespace kiln::network {

// The files write_artifact writes: those of an existing `dir` it replaces; the rest it keeps.
const std::vector<std::string>& artifact_files();

// `description` is model.json's text. UserError, before any work, when `dir` exists and is
// not a folder or its parent cannot be written.
void write_artifact(const NetworkProgram& program, const Target& target, const std::string& name,
                    const std::string& description, const std::string& dir);

}  // namespace kiln::network
