// run_model.h: inputs, the latency line and outputs, the same for a local and a farm run.
#include "tools/run_model.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

#include "compiler/base/error.h"
#include "kiln/npy_header.h"
#include "tools/npy_file.h"

namespace kiln::tools {

std::map<std::string, std::string> input_files(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    // The first '=' splits: a path may hold '=' (input names do not, in every exporter seen).
    size_t eq = spec.find('=');
    user_check(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
        << "--input " << spec << ": expected NAME=FILE";
    auto [it, fresh] = files.emplace(spec.substr(0, eq), spec.substr(eq + 1));
    user_check(fresh) << "--input " << it->first << " is given twice (" << it->second << " and "
                      << spec.substr(eq + 1) << ")";
  }
  return files;
}

namespace {

// A batched input described by a file of another batch: the file's axis 0, when the rest of the
// shape is the input's (the runtime then checks the batch against the range).
TensorInfo as_given(const TensorInfo& t, const TensorFile& f) {
  if (!t.batched || f.dtype.empty() || f.shape.size() != t.shape.size() || f.shape.empty() ||
      !std::equal(f.shape.begin() + 1, f.shape.end(), t.shape.begin() + 1))
    return t;
  TensorInfo given = t;
  const uint64_t per_row = t.shape[0] > 0 ? t.bytes / static_cast<uint64_t>(t.shape[0]) : 0;
  given.shape[0] = f.shape[0];
  given.bytes = per_row * static_cast<uint64_t>(f.shape[0]);
  return given;
}

}  // namespace

std::vector<TensorInfo> outputs_at_batch(const Model& model, int64_t batch) {
  std::vector<TensorInfo> out = model.outputs();
  for (TensorInfo& t : out) {
    if (!t.batched) continue;
    const int64_t per_sample = t.shape[0] / model.min_batch();
    t.bytes = t.bytes / static_cast<uint64_t>(model.min_batch()) * static_cast<uint64_t>(batch);
    t.shape[0] = per_sample * batch;
  }
  return out;
}

std::vector<std::string> read_inputs(const std::vector<TensorInfo>& inputs,
                                     const std::vector<std::string>& specs,
                                     std::vector<std::vector<int64_t>>* shapes) {
  std::map<std::string, std::string> files = input_files(specs);
  std::vector<std::string> in;
  for (const TensorInfo& model_input : inputs) {
    auto it = files.find(model_input.name);
    user_check(it != files.end()) << "no --input " << model_input.name
                                  << "=FILE for the model's input " << model_input.name;
    const TensorFile f = read_tensor_file(it->second);
    const TensorInfo t = shapes ? as_given(model_input, f) : model_input;
    if (shapes) shapes->push_back(t.shape);
    // A .npy states its shape, which must be the input's exactly: an NHWC array for an NCHW
    // input has the same element count and would run silently to a wrong answer. (A raw
    // file states none; its size is checked below.)
    user_check(f.dtype.empty() || f.shape == t.shape)
        << it->second << ": shape " << npy::shape_text(f.shape) << ", but the model's input " << t.name
        << " has shape " << npy::shape_text(t.shape);
    std::string bytes = converted(f, t.dtype, it->second + " (input " + t.name + ")");
    user_check(bytes.size() == t.bytes)
        << it->second << ": " << bytes.size() / dtype_bytes(t.dtype) << " values, input " << t.name
        << " needs " << t.bytes / dtype_bytes(t.dtype) << " (" << t.dtype << ")";
    in.push_back(std::move(bytes));
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

std::string output_file_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');  // no hidden or empty name
  return out;
}

void write_outputs(const std::string& dir, const std::vector<TensorInfo>& outputs,
                   const std::vector<std::string>& values) {
  namespace fs = std::filesystem;
  if (dir.empty()) return;
  fs::create_directories(dir);
  std::set<std::string> taken;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string file = output_file_name(outputs[i].name);
    if (!taken.insert(file).second) file.append(1, '_').append(std::to_string(i));  // a clash
    taken.insert(file);
    std::string path = (fs::path(dir) / (file + ".npy")).string();
    write_npy(path, outputs[i].dtype, outputs[i].shape, values[i]);
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
