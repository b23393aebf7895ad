// Writing a compiled network: every unique kernel lowered once (tuner's builder), the AOT
// executor plan of the program's steps, and the files of the model directory (model.so,
// model.params, model.json; model.a + model.h to link the model statically). All
// are written into a temporary directory beside `dir` first and renamed into place at the
// end, so a failed compile leaves no half-written model.
#pragma once

#include <string>

#include "compiler/network/network_program.h"
#include "compiler/target/target.h"

namespace kiln::network {

// `description` is model.json's text.
void write_artifact(const NetworkProgram& program, const Target& target, const std::string& name,
                    const std::string& description, const std::string& dir);

}  // namespace kiln::network
