// The smallest useful board program: load a model, run it once on zeroed buffers. Linked
// statically against libkiln_rt with --gc-sections, and compared with size_baseline.cpp (the
// same program without kiln), it measures what the runtime adds to an application.
#include <cstdio>
#include <exception>
#include <vector>

#include "kiln/model.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    const kiln::Model m = kiln::Model::load(argv[1], argv[2]);
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
    for (const kiln::TensorInfo& t : m.inputs())
      inputs.push_back(buffers.emplace_back(t.bytes).data());
    for (const kiln::TensorInfo& t : m.outputs())
      outputs.push_back(buffers.emplace_back(t.bytes).data());
    m.run(inputs, outputs);
    std::printf("%s ran\n", m.name().c_str());
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  return 0;
}
