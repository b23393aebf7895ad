// model_app: a board application that links only kiln's runtime (libkiln_rt: no LLVM, no gRPC).
// It loads a compiled model (DIR/model.so + DIR/model.params, what `kiln compile` writes), reads
// one input file per model input (raw little-endian f32, or float32 .npy), runs the model N
// times and prints the load time, the first run, the median latency and the top-5 classes
// (index and score) of the first output.
//
//   model_app out/ cat.npy [--repeat 50] [--threads 4] [--save out0.bin]
//
// --save writes the first output's raw bytes (what tests compare). Exit status: 0, 1 when the
// model cannot be loaded or run, 2 for bad usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/timing.h"
#include "tensor_file.h"

namespace {

constexpr const char* kUsage =
    "usage: model_app DIR INPUT [INPUT ...] [--repeat N] [--threads T] [--save FILE]\n"
    "  DIR holds model.so and model.params; one INPUT per model input (raw f32 or .npy)\n";

struct Options {
  std::string dir;
  std::vector<std::string> inputs;
  int repeat = 20;
  int threads = 0;
  std::string save;
};

bool parse_count(const char* text, int min, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < min || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parse_options(int argc, char** argv, Options* o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--repeat" && has_value) {
      if (!parse_count(argv[++i], 1, &o->repeat)) return false;
    } else if (a == "--threads" && has_value) {
      if (!parse_count(argv[++i], 0, &o->threads)) return false;
    } else if (a == "--save" && has_value) {
      o->save = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      return false;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() < 2) return false;
  o->dir = positional[0];
  o->inputs.assign(positional.begin() + 1, positional.end());
  return true;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ')';
  return s;
}

void print_top5(const kiln::TensorInfo& out, const kiln::AlignedBuffer& data) {
  if (out.dtype != "f32") {
    std::printf("output '%s' is %s: no top-5 for a non-f32 output\n", out.name.c_str(),
                out.dtype.c_str());
    return;
  }
  const auto* scores = static_cast<const float*>(data.data());
  std::vector<size_t> order(out.bytes / sizeof(float));
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t k = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](size_t a, size_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  std::printf("top-%zu of '%s':\n", k, out.name.c_str());
  for (size_t i = 0; i < k; ++i) std::printf("  %6zu  %.6g\n", order[i], scores[order[i]]);
}

bool save_output(const std::string& path, const kiln::AlignedBuffer& data, size_t bytes) {
  const std::string temp = path + ".tmp";
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(data.data(), 1, bytes, f) == bytes;
  if (std::fclose(f) != 0 || !ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, &o)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  try {
    const auto t_load = std::chrono::steady_clock::now();
    kiln::Model model = kiln::Model::load(o.dir + "/model.so", o.dir + "/model.params", o.threads);
    const double load_ms = ms_since(t_load);
    if (o.inputs.size() != model.inputs().size()) {
      std::fprintf(stderr, "model_app: model '%s' takes %zu input(s), %zu file(s) given\n",
                   model.name().c_str(), model.inputs().size(), o.inputs.size());
      return 2;
    }

    std::vector<kiln::app::TensorFile> files;
    files.reserve(o.inputs.size());  // the shapes below point into it
    std::vector<const void*> inputs;
    std::vector<std::span<const int64_t>> shapes;
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      const kiln::TensorInfo& spec = model.inputs()[i];
      if (spec.dtype != "f32") {
        std::fprintf(stderr, "model_app: input '%s' is %s; model_app feeds f32 inputs only\n",
                     spec.name.c_str(), spec.dtype.c_str());
        return 1;
      }
      files.push_back(kiln::app::read_tensor_file(o.inputs[i]));
      const kiln::app::TensorFile& f = files.back();
      const bool npy = o.inputs[i].size() >= 4 &&
                       o.inputs[i].compare(o.inputs[i].size() - 4, 4, ".npy") == 0;
      // A model with a ranged batch takes a .npy of any batch in its range (checked below).
      if (!(npy && spec.batched) && f.values.size() * sizeof(float) != spec.bytes) {
        std::fprintf(stderr, "model_app: '%s' holds %zu floats, input '%s' %s needs %llu\n",
                     o.inputs[i].c_str(), f.values.size(), spec.name.c_str(),
                     shape_text(spec.shape).c_str(),
                     static_cast<unsigned long long>(spec.bytes / sizeof(float)));
        return 1;
      }
      // A .npy states its shape, which must be the input's exactly (an NHWC array for an NCHW
      // input has the same size and would run to a wrong answer); a raw file states none.
      shapes.push_back(npy ? std::span<const int64_t>(f.shape) : std::span<const int64_t>(spec.shape));
      inputs.push_back(f.values.data());
    }
    int64_t batch = 1;
    try {
      batch = model.check_input_shapes(shapes);
    } catch (const kiln::RuntimeError& e) {
      std::fprintf(stderr, "model_app: %s\n", e.what());
      return 2;
    }
    // Outputs as a run of `batch` samples writes them (the batched ones scale along axis 0).
    std::vector<kiln::AlignedBuffer> output_buffers;
    std::vector<void*> outputs;
    std::vector<kiln::TensorInfo> output_specs = model.outputs();
    for (kiln::TensorInfo& spec : output_specs) {
      if (spec.batched) {
        spec.shape[0] = spec.shape[0] / model.min_batch() * batch;
        spec.bytes = spec.bytes / static_cast<uint64_t>(model.min_batch()) * batch;
      }
      output_buffers.emplace_back(spec.bytes);
      outputs.push_back(output_buffers.back().data());
    }
    std::vector<kiln::Model::Tensor> given;
    for (size_t i = 0; i < inputs.size(); ++i) given.push_back({inputs[i], shapes[i]});
    auto run = [&] { model.run_shaped(given, outputs); };

    const auto t_first = std::chrono::steady_clock::now();
    run();
    const double first_ms = ms_since(t_first);
    kiln::TimingOptions timing;
    timing.repeat = o.repeat;
    const kiln::Timing timed = kiln::time_calls(run, timing);
    std::printf(
        "model '%s': load %.3f ms, first run %.3f ms, median %.4f ms over %d runs on %d "
        "thread(s)\n",
        model.name().c_str(), load_ms, first_ms, timed.median_ms(), o.repeat,
        model.num_threads());
    print_top5(output_specs[0], output_buffers[0]);
    if (!o.save.empty() && !save_output(o.save, output_buffers[0], output_specs[0].bytes)) {
      std::fprintf(stderr, "model_app: cannot write '%s': %s\n", o.save.c_str(),
                   std::strerror(errno));
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_app: %s\n", e.what());
    return 1;
  }
  return 0;
}
