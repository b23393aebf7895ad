// `kiln run DIR --input NAME=FILE ... [--runs N] [--threads T] [--output DIR]`: loads a
// compiled model with the runtime (kiln::Model), runs it, prints the latency (median, mean,
// min, max over the runs) and writes each output as NAME.npy. With --farm HOST:PORT --key KEY
// the same happens on a board of the farm (run_farm.cpp).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>

#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/timing.h"
#include "tools/model_profile.h"
#include "tools/run_model.h"
#include "tools/subcommands.h"
#include "tools/write_file.h"

namespace kiln::tools {

namespace {

// Where the time goes by kind of kernel: a network's loss to a peer is often many cheap steps
// of one kind (layout conversions, copies around a reshape) rather than one slow layer.
void print_time_by_template(const nlohmann::json& layers, const std::vector<double>& step_ms) {
  std::map<std::string, std::pair<int, double>> by;  // template -> (steps, ms)
  double total = 0;
  for (size_t i = 0; i < step_ms.size() && i < layers.size(); ++i) {
    auto& [n, ms] = by[layers[i].value("template", "?")];
    ++n, ms += step_ms[i], total += step_ms[i];
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> rows(by.begin(), by.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& x, const auto& y) { return x.second.second > y.second.second; });
  std::cout << "time by kernel template:\n";
  for (size_t i = 0; i < std::min<size_t>(6, rows.size()); ++i) {
    const auto& [tpl, use] = rows[i];
    std::cout << "  " << tpl << "  " << use.first << " steps  " << use.second << " ms  ("
              << static_cast<int>(100 * use.second / std::max(total, 1e-12) + 0.5) << "%)\n";
  }
}

// Times every layer over the same number of runs, writes the medians as JSON and prints the
// slowest layers and the time by kind of kernel.
void write_layer_profile(const Model& m, const RunArgs& a, const std::vector<const void*>& ip,
                         const std::vector<void*>& op) {
  nlohmann::json layers = read_model_json(a.dir)["layers"];
  ModelProfile p = profile_model(m, ip, op, layers.size(), a.runs);
  write_file_atomically(a.profile, profile_to_json(p));
  std::vector<size_t> order(layers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p.step_ms[x] > p.step_ms[y]; });
  std::cout << "slowest layers (median ms of " << a.runs << " runs, sum "
            << std::accumulate(p.step_ms.begin(), p.step_ms.end(), 0.0) << " ms):\n";
  for (size_t i = 0; i < std::min<size_t>(5, order.size()); ++i) {
    const auto& l = layers[order[i]];
    std::cout << "  " << order[i] << "  " << p.step_ms[order[i]] << " ms  "
              << l.value("node", "") << "  " << l.value("template", "") << "\n";
  }
  print_time_by_template(layers, p.step_ms);
  std::cout << "wrote " << a.profile << " (kiln report " << a.dir << " --profile " << a.profile
            << " draws it)\n";
}

// An input whose values the model refuses (an index out of range) is the user's input: exit
// 2 with the runtime's message, as for any other bad input.
void run_checked(const Model& m, const std::vector<Model::Tensor>& ip,
                 const std::vector<void*>& op) {
  try {
    m.run_shaped(std::span<const Model::Tensor>(ip), std::span<void* const>(op));
  } catch (const RuntimeError& e) {
    if (e.code() != ErrorCode::kInvalidInput) throw;
    std::string what = e.what();
    if (what.rfind("kiln: ", 0) == 0) what.erase(0, 6);
    user_error() << what;
  }
}

int run_model(const RunArgs& a) {
  namespace fs = std::filesystem;
  user_check(fs::is_directory(a.dir)) << a.dir << " is not a folder (kiln compile -o writes one)";
  input_files(a.inputs);  // a malformed or repeated --input fails before the model loads
  // Before the model loads and runs (here or on a board): an --output that cannot be written.
  if (!a.output.empty()) check_output_folder(a.output, "--output");
  if (!a.farm.empty()) {
    user_check(a.profile.empty()) << "--profile times layers through the step hook in this "
                                     "process; it cannot be combined with --farm";
    return run_model_on_farm(a);
  }
  user_check(a.key.empty() && a.token_file.empty())
      << "--key and --token-file go with --farm HOST:PORT";
  // The runtime reports a missing or broken model as std::runtime_error; here the folder is
  // the user's input, so it is a user error.
  Model m = [&] {
    try {
      return Model::load((fs::path(a.dir) / "model.so").string(),
                         (fs::path(a.dir) / "model.params").string(), a.threads);
    } catch (const std::runtime_error& e) {
      // The runtime's message names the file and starts with "kiln: ", as main's line will.
      std::string what = e.what();
      if (what.rfind("kiln: ", 0) == 0) what.erase(0, 6);
      user_error() << what;
      throw;
    }
  }();
  // A model with a ranged batch takes the batch the files hold (the runtime checks its range).
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> in = read_inputs(m.inputs(), a.inputs, &shapes);
  std::vector<Model::Tensor> given;
  for (size_t i = 0; i < in.size(); ++i) given.push_back({in[i].data(), shapes[i]});
  int64_t batch = 1;
  try {
    batch = m.check_input_shapes(std::vector<std::span<const int64_t>>(shapes.begin(), shapes.end()));
  } catch (const RuntimeError& e) {
    std::string what = e.what();
    if (what.rfind("kiln: ", 0) == 0) what.erase(0, 6);
    user_error() << what;
  }
  const std::vector<TensorInfo> outputs = outputs_at_batch(m, batch);
  std::vector<std::string> out;
  for (const TensorInfo& t : outputs) out.emplace_back(t.bytes, '\0');
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (auto& v : in) ip.push_back(v.data());
  for (auto& v : out) op.push_back(v.data());
  TimingOptions timing;
  timing.repeat = a.runs;
  std::vector<double> ms;
  for (double s : time_calls([&] { run_checked(m, given, op); }, timing).seconds)
    ms.push_back(s * 1e3);
  print_latency(ms, std::to_string(m.num_threads()),
                m.max_batch() > 0 ? ", batch " + std::to_string(batch) : "");
  if (!a.profile.empty()) {
    // The layers of model.json are the one-sample program's: that is what is timed.
    user_check(m.max_batch() == 0 || (m.min_batch() == 1 && batch == 1))
        << "--profile on a ranged batch times one sample: give inputs of batch 1 (the range must "
           "include it)";
    write_layer_profile(m, a, ip, op);
  }
  write_outputs(a.output, outputs, out);
  return 0;
}

}  // namespace

Run add_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a compiled model directory and time it");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("dir", a->dir, "Directory that kiln compile wrote")->required();
  cmd->add_option("--input", a->inputs,
                  "NAME=FILE (.npy, or raw bytes of the input's dtype), one per model input")
      ->required();
  cmd->add_option("--runs", a->runs, "Timed runs")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (0: KILN_NUM_THREADS or all CPUs)")->check(CLI::Range(0, 1024));
  cmd->add_option("--output", a->output, "Directory for the outputs as NAME.npy");
  cmd->add_option("--profile", a->profile, "Also time every layer; write the medians to this JSON file");
  cmd->add_option("--farm", a->farm, "Run on a board of this farm (HOST:PORT of a tracker or direct worker)");
  cmd->add_option("--key", a->key, "With --farm: the device key of the boards to run on");
  cmd->add_option("--token-file", a->token_file, "With --farm: the farm token (else KILN_FARM_TOKEN)");
  cmd->add_option("--tls-ca", a->tls_ca, "With --farm: the CA certificate when the farm speaks TLS");
  cmd->add_option("--timeout", a->timeout_s, "With --farm: seconds the board may take for all runs")
      ->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  return [a] { return run_model(*a); };
}

}  // namespace kiln::tools
