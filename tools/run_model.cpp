// run_model.h: inputs, the latency line and outputs, the same for a local and a farm run.
#include "tools/run_model.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>

#include "compiler/base/error.h"
#include "tools/npy_file.h"

namespace kiln::tools {

std::vector<std::vector<float>> read_inputs(const std::vector<TensorInfo>& inputs,
                                            const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    size_t eq = spec.rfind('=');
    user_check(eq != std::string::npos) << "--input " << spec << ": expected NAME=FILE";
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::vector<std::vector<float>> in;
  for (const TensorInfo& t : inputs) {
    auto it = files.find(t.name);
    user_check(it != files.end()) << "no --input " << t.name << "=FILE for the model's input "
                                  << t.name;
    F32File f = read_f32_file(it->second);
    user_check(f.values.size() * 4 == t.bytes)
        << it->second << ": " << f.values.size() << " values, input " << t.name << " needs "
        << t.bytes / 4;
    in.push_back(std::move(f.values));
    files.erase(it);
  }
  user_check(files.empty()) << "--input " << files.begin()->first
                            << ": the model has no input of that name";
  return in;
}

void print_latency(const std::vector<double>& ms, const std::string& threads,
                   const std::string& where) {
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::cout << "latency over " << ms.size() << " runs (" << threads << " threads" << where
            << "): median " << sorted[sorted.size() / 2] << " ms, mean "
            << std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size() << " ms, min "
            << sorted.front() << " ms, max " << sorted.back() << " ms\n";
}

void write_outputs(const std::string& dir, const std::vector<TensorInfo>& outputs,
                   const std::vector<std::vector<float>>& values) {
  namespace fs = std::filesystem;
  if (dir.empty()) return;
  fs::create_directories(dir);
  for (size_t i = 0; i < values.size(); ++i) {
    std::string path = (fs::path(dir) / (outputs[i].name + ".npy")).string();
    write_npy(path, values[i], outputs[i].shape);
    std::cout << "wrote " << path << "\n";
  }
}

#ifndef KILN_WITH_FARM
int run_model_on_farm(const RunArgs&) {
  user_error() << "--farm: this kiln was built without the device farm (gRPC)";
  return 2;
}
#endif

}  // namespace kiln::tools
