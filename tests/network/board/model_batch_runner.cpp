// model_batch_runner: runs many compiled models in one process, so that tests checking
// hundreds of small models on AArch64 pay qemu's start-up once instead of once per model.
// It links only the runtime and is cross-built with it.
//
//   model_batch_runner MANIFEST
//
// Each manifest line is `MODEL_DIR OUTPUT_PREFIX INPUT...`: the model in MODEL_DIR
// (model.so + model.params) runs once on the raw bytes of the INPUT files (one per model
// input, any dtype, exactly the input's size) on one thread, and output k is written raw to
// OUTPUT_PREFIX.k. One result line per model on stdout: `ok MODEL_DIR` or
// `error MODEL_DIR: why`; a broken model does not stop the others. Exit status 0 when the
// manifest was read (whatever the models did), 2 otherwise.
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/model.h"
#include "kiln/runtime.h"

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const void* data, size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f.good()) throw std::runtime_error("cannot write '" + path + "'");
}

void run_line(const std::string& dir, const std::string& out_prefix,
              const std::vector<std::string>& input_files) {
  kiln::Model model = kiln::Model::load(dir + "/model.so", dir + "/model.params", 1);
  if (input_files.size() != model.inputs().size())
    throw std::runtime_error("the model takes " + std::to_string(model.inputs().size()) +
                             " inputs, " + std::to_string(input_files.size()) + " files given");
  std::vector<kiln::AlignedBuffer> inputs, outputs;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < input_files.size(); ++i) {
    const std::string bytes = read_bytes(input_files[i]);
    const kiln::TensorInfo& spec = model.inputs()[i];
    if (bytes.size() != spec.bytes)
      throw std::runtime_error("'" + input_files[i] + "' has " + std::to_string(bytes.size()) +
                               " bytes, input '" + spec.name + "' needs " +
                               std::to_string(spec.bytes));
    inputs.emplace_back(spec.bytes);
    if (!bytes.empty()) std::memcpy(inputs.back().data(), bytes.data(), bytes.size());
    in_ptrs.push_back(inputs.back().data());
  }
  for (const kiln::TensorInfo& spec : model.outputs()) {
    outputs.emplace_back(spec.bytes);
    out_ptrs.push_back(outputs.back().data());
  }
  model.run(in_ptrs, out_ptrs);
  for (size_t k = 0; k < outputs.size(); ++k)
    write_bytes(out_prefix + "." + std::to_string(k), outputs[k].data(), model.outputs()[k].bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: model_batch_runner MANIFEST\n";
    return 2;
  }
  std::ifstream manifest(argv[1]);
  if (!manifest) {
    std::cerr << "model_batch_runner: cannot read '" << argv[1] << "'\n";
    return 2;
  }
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string dir, out_prefix, file;
    if (!(fields >> dir >> out_prefix)) continue;
    std::vector<std::string> input_files;
    while (fields >> file) input_files.push_back(file);
    try {
      run_line(dir, out_prefix, input_files);
      std::cout << "ok " << dir << "\n";
    } catch (const std::exception& e) {
      std::cout << "error " << dir << ": " << e.what() << "\n";
    }
  }
  return 0;
}
