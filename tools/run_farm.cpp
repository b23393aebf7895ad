// `kiln run DIR --farm HOST:PORT --key KEY`: the model directory runs on a board of the farm.
// model.so, model.params and the inputs travel as one model job (farm.proto's ModelRun); the
// worker runs it in its sandboxed child (kiln-kernel-runner --params) and sends back the
// outputs of the first run and the time of each timed run. The board may be of another
// architecture than this machine, so the model's inputs and outputs come from model.json, not
// from loading model.so here.
#include <cstring>
#include <iostream>
#include <system_error>

#include "compiler/base/error.h"
#include "rpc/farm/client.h"
#include "rpc/farm/transport.h"
#include "runtime/process/file_bytes.h"
#include "tools/farm_args.h"
#include "tools/model_profile.h"
#include "tools/npy_file.h"
#include "tools/run_model.h"

namespace kiln::tools {
namespace {

std::string read_bytes(const std::string& path) {
  try {
    return read_file_bytes(path);
  } catch (const std::system_error& e) {
    user_error() << e.what() << " (is it a directory written by kiln compile?)";
    throw;  // not reached: user_error() throws
  }
}

// model.json's "inputs" or "outputs".
std::vector<TensorInfo> tensors(const nlohmann::json& list, const std::string& what) {
  user_check(list.is_array()) << "model.json has no \"" << what << "\" list";
  std::vector<TensorInfo> out;
  for (const nlohmann::json& t : list) {
    TensorInfo info{t.value("name", ""), t.value("dtype", "f32"),
                    t.value("shape", std::vector<int64_t>{}), 0};
    info.bytes = dtype_bytes(info.dtype);
    user_check(info.bytes > 0) << "model.json: " << what << " '" << info.name
                               << "' has an unknown dtype '" << info.dtype << "'";
    for (int64_t d : info.shape) info.bytes *= static_cast<uint64_t>(d);
    out.push_back(std::move(info));
  }
  return out;
}

// Refuses a key no worker of the farm serves, listing the keys it has (a direct worker takes
// its own key, which Submit checks).
void check_key(farm::FarmClient& client, const std::string& key, const std::string& address) {
  const farm::pb::StatusReply status = client.status();
  if (status.direct()) return;
  std::string keys;
  for (const farm::pb::WorkerStatus& w : status.workers()) {
    if (w.key() == key) return;
    if (keys.find("'" + w.key() + "'") == std::string::npos)
      keys += (keys.empty() ? "'" : ", '") + w.key() + "'";
  }
  user_error() << "no worker with key '" << key << "' is registered with the farm at " << address
               << " (keys there: " << (keys.empty() ? "none" : keys) << ")";
}

// The one line that says why the board's run failed, by the result's error kind.
[[noreturn]] void fail(const farm::pb::Result& r, const RunArgs& a) {
  const std::string on = r.worker_id().empty() ? "" : " on worker " + r.worker_id();
  switch (r.error()) {
    case farm::pb::BUILD_ERROR:
      user_error() << "the board refused the model" << on << ": " << r.message();
      break;
    case farm::pb::TIMEOUT:
      user_error() << "the model ran past --timeout " << a.timeout_s << " s" << on
                   << " and was stopped";
      break;
    case farm::pb::RUNTIME_ERROR:
      user_error() << "the model failed" << on << ": " << r.message();
      break;
    case farm::pb::WORKER_LOST:
      user_error() << "the worker running the model was lost: " << r.message();
      break;
    default:
      user_error() << "the farm could not run the model" << on << ": " << r.message();
  }
  throw;  // not reached: user_error() throws
}

}  // namespace

int run_model_on_farm(const RunArgs& a) {
  user_check(!a.key.empty()) << "--farm needs --key KEY: the device key of the boards to run on";
  nlohmann::json description = read_model_json(a.dir);
  const std::vector<TensorInfo> inputs = tensors(description["inputs"], "inputs");
  const std::vector<TensorInfo> outputs = tensors(description["outputs"], "outputs");
  const std::vector<std::string> in = read_inputs(inputs, a.inputs);

  farm::pb::Job job;
  job.set_so(read_bytes(a.dir + "/model.so"));
  farm::pb::ModelRun* model = job.mutable_model();
  model->set_params(read_bytes(a.dir + "/model.params"));
  for (const std::string& v : in) model->add_inputs(v);
  model->set_outputs(static_cast<uint32_t>(outputs.size()));
  model->set_warmup(1);
  job.set_repeat(static_cast<uint32_t>(a.runs));
  job.set_number(1);
  job.set_threads(static_cast<uint32_t>(a.threads));
  job.set_timeout_s(a.timeout_s);
  // The whole job is one gRPC message: say so here rather than let gRPC refuse it.
  const size_t bytes = job.ByteSizeLong();
  user_check(bytes + (1 << 16) <= static_cast<size_t>(farm::kMaxMessageBytes))
      << a.dir << ": model.so, model.params and the inputs make a " << (bytes >> 20)
      << " MiB job, more than the farm's " << (farm::kMaxMessageBytes >> 20)
      << " MiB message limit";

  const std::string token = as_user_error([&] { return farm::load_token(a.token_file); });
  farm::FarmClient client(a.farm, token, a.tls_ca);
  const farm::pb::Result r = as_user_error([&] {
    check_key(client, a.key, a.farm);
    return client.submit(a.key, {job})->wait_all().at(0);
  });
  if (r.error() != farm::pb::OK) fail(r, a);
  user_check(r.outputs_size() == static_cast<int>(outputs.size()))
      << "the board sent " << r.outputs_size() << " outputs, the model has " << outputs.size();

  std::vector<double> ms;
  for (double s : r.costs()) ms.push_back(s * 1e3);
  print_latency(ms, a.threads == 0 ? "the board's default" : std::to_string(a.threads),
                " on worker " + r.worker_id());
  std::vector<std::string> values;
  for (int i = 0; i < r.outputs_size(); ++i) {
    const std::string& b = r.outputs(i);
    user_check(b.size() == outputs[i].bytes)
        << "the board sent " << b.size() << " bytes for output '" << outputs[i].name << "', it has "
        << outputs[i].bytes;
    values.push_back(b);
  }
  write_outputs(a.output, outputs, values);
  return 0;
}

}  // namespace kiln::tools
