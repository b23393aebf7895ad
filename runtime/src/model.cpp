// kiln::Model: loads model.so through KernelModule (architecture, CPU features, the
// kiln_module_init handshake), or takes a statically linked model's entry table through the
// same checks; reads its info record, maps the params file and checks its header and chunk
// table against it, allocates the workspace; run() then only checks pointers and calls
// kiln_model_run, the first run with the params checked chunk by chunk before each step reads
// them (params_first_use.h).
#include "kiln/model.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <mutex>
#include <optional>
#include <utility>

#include "kiln/cpu_features.h"
#include "kiln/kernel_abi.h"
#include "kiln/params.h"
#include "kiln/runtime.h"
#include "message.h"
#include "model_info.h"
#include "params_first_use.h"
#include "target_record.h"

namespace kiln {
namespace {

// The module's info record as text, bounded by the symbol's recorded size so that a record
// without its NUL is an error rather than a read past the end.
std::string_view info_text(const KernelModule& module) {
  const auto* text = static_cast<const char*>(module.symbol(KILN_MODEL_INFO_SYMBOL));
  const std::size_t size = KernelModule::symbol_size(text);
  const std::size_t length = size ? strnlen(text, size) : std::strlen(text);
  if (size && length == size) {
    throw_error(ErrorCode::kLoad, {"kiln: '", module.path(), "' has a malformed ",
                                   KILN_MODEL_INFO_SYMBOL, ": it is not NUL-terminated"});
  }
  return {text, length};
}

// A statically linked model's entry table, checked as KernelModule checks a .so (ABI version,
// the CPU features its code needs) and initialised; returns its info record's text.
std::string_view open_static_entry(const kiln_model_entry* e) {
  if (!e) throw_error(ErrorCode::kInvalidArgument, {"kiln: the static model entry is null"});
  if (e->abi_version != KILN_ABI_VERSION) {
    throw_error(ErrorCode::kLoad, {"kiln: the statically linked model was built for kernel ABI ",
                                   Num(e->abi_version), ", this runtime speaks version ",
                                   Num(KILN_ABI_VERSION), "; recompile it with this kiln"});
  }
  if (!e->target || !e->info || !e->init || !e->run || !e->step_hook) {
    throw_error(ErrorCode::kLoad, {"kiln: the static model entry has a null field: it is not a "
                                   "kiln_model_entry written by kiln compile"});
  }
  const TargetRecord record = parse_target_record(e->target);
  if (record.arch != cpu_arch()) {
    throw_error(ErrorCode::kLoad, {"kiln: the statically linked model is built for '",
                                   record.arch, "', this machine is ", cpu_arch()});
  }
  std::size_t count = 0;
  if (const std::string missing = missing_cpu_features(record, &count); count > 0) {
    throw_error(ErrorCode::kLoad, {"kiln: the statically linked model (target ", record.target,
                                   ") needs ", missing, ", this CPU lacks ",
                                   count == 1 ? "it" : "them"});
  }
  if (const int32_t status = e->init(ThreadPool::api()); status != 0) {
    throw_error(ErrorCode::kLoad, {"kiln: ", KILN_MODULE_INIT_SYMBOL,
                                   " of the statically linked model failed with status ",
                                   Num(status)});
  }
  return e->info;
}

}  // namespace

struct Model::State {
  // Members are destroyed bottom-up: the module (whose kernels use the pool) is closed before
  // the pool's threads stop.
  ThreadPool pool;
  std::optional<KernelModule> module;  // model.so; none for a statically linked model
  ModelInfo info;
  std::string source;  // the .so's path, or "NAME (statically linked)", for messages
  ParamsFile params;
  AlignedBuffer workspace;
  AlignedBuffer staging;  // a padded run's inputs and outputs (ModelInfo::pad_batches)
  kiln_model_run_fn entry = nullptr;
  kiln_model_step_hook_fn* hook = nullptr;  // the model's step hook slot
  ParamsFirstUse first_use;
  std::mutex running;  // one run at a time: they share the workspace

  State(const std::string& so, const std::string& params_path, int threads)
      : pool(threads),
        module(std::in_place, so, pool,
               std::initializer_list<const char*>{KILN_MODEL_RUN_SYMBOL, KILN_MODEL_INFO_SYMBOL,
                                                  KILN_MODEL_STEP_HOOK_SYMBOL},
               "a kiln model"),
        info(parse_model_info(info_text(*module), so)),
        source(so),
        params(ParamsFile::open(params_path, &pool, ParamsCheck::kTableOnly)),
        workspace(check_params_and_size_workspace(params_path)),
        staging(info.staging_bytes()),
        entry(reinterpret_cast<kiln_model_run_fn>(module->symbol(KILN_MODEL_RUN_SYMBOL))),
        hook(static_cast<kiln_model_step_hook_fn*>(module->symbol(KILN_MODEL_STEP_HOOK_SYMBOL))),
        first_use(params, info.verify, pool) {}

  State(const kiln_model_entry* e, const std::string& params_path, int threads)
      : pool(threads),
        info(parse_model_info(open_static_entry(e), "the statically linked model")),
        source(concat({info.name, " (statically linked)"})),
        params(ParamsFile::open(params_path, &pool, ParamsCheck::kTableOnly)),
        workspace(check_params_and_size_workspace(params_path)),
        staging(info.staging_bytes()),
        entry(e->run),
        hook(e->step_hook),
        first_use(params, info.verify, pool) {}

  // Runs between mapping the params and allocating the workspace: a mismatch is reported
  // before a possibly large allocation.
  std::size_t check_params_and_size_workspace(const std::string& params_path) const {
    if (params.bytes() != info.params_bytes || params.checksum() != info.params_checksum) {
      throw_error(
          ErrorCode::kParams,
          {"kiln: params file '", params_path, "' does not belong to model '", source,
           "': it holds ", Num(params.bytes()), " bytes with checksum ",
           Num(params.checksum(), true), ", the model was built for ", Num(info.params_bytes),
           " bytes with checksum ", Num(info.params_checksum, true)});
    }
    if (info.workspace_bytes > SIZE_MAX / 2) {
      throw_error(ErrorCode::kLoad,
                  {"kiln: model '", source, "' asks for a ", Num(info.workspace_bytes),
                   "-byte workspace, more than this machine can address"});
    }
    return static_cast<std::size_t>(info.workspace_bytes);
  }
};

Model::Model(std::unique_ptr<State> state) : state_(std::move(state)) {}
Model::Model(Model&& other) noexcept = default;
Model& Model::operator=(Model&& other) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::string& so_path, const std::string& params_path, int num_threads) {
  return Model(std::make_unique<State>(so_path, params_path, num_threads));
}

Model Model::load_static(const kiln_model_entry& entry, const std::string& params_path,
                         int num_threads) {
  return Model(std::make_unique<State>(&entry, params_path, num_threads));
}

void Model::run(std::span<const void* const> inputs, std::span<void* const> outputs) const {
  check_pointers(inputs, outputs);
  run_batch(inputs.data(), outputs.data(), state_->info.min_batch);
}

void Model::check_pointers(std::span<const void* const> inputs,
                           std::span<void* const> outputs) const {
  if (!state_) throw_error(ErrorCode::kInvalidArgument, {"kiln: run on a moved-from Model"});
  const State& s = *state_;
  if (inputs.size() != s.info.inputs.size() || outputs.size() != s.info.outputs.size()) {
    throw_error(ErrorCode::kInvalidArgument,
                {"kiln: model '", s.info.name, "' takes ", Num(s.info.inputs.size()),
                 " input(s) and ", Num(s.info.outputs.size()), " output(s), got ",
                 Num(inputs.size()), " and ", Num(outputs.size())});
  }
  // One loop and one message for both lists: the runtime's size counts every throw site.
  for (std::size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
    const bool in = i < inputs.size();
    const std::size_t k = in ? i : i - inputs.size();
    if (in ? inputs[k] != nullptr : outputs[k] != nullptr) continue;
    throw_error(ErrorCode::kInvalidArgument,
                {"kiln: model '", s.info.name, in ? "': input " : "': output ", Num(k), " ('",
                 (in ? s.info.inputs : s.info.outputs)[k].name, "') is null"});
  }
}

// Runs `batch` samples of a ranged model as runs of its batch classes, largest first, each on the
// next slices of every batched input and of every output (one run of a model without a range).
void Model::run_batch(const void* const* inputs, void* const* outputs, int64_t batch) const {
  State& s = *state_;
  const ModelInfo& info = s.info;
  const std::size_t n_in = info.inputs.size(), n_out = info.outputs.size();
  // run() allocates nothing: the slices live here (parse_model_info refuses more tensors), and
  // the slot after the inputs carries the class to run (kernel_abi.h).
  void* in[kMaxModelTensors + 1];
  void* out[kMaxModelTensors];
  const uint64_t per = info.max_batch > 0 ? static_cast<uint64_t>(info.min_batch) : 1;
  int64_t done = 0, left = info.max_batch > 0 ? batch : 1;
  int32_t status = 0;
  std::lock_guard<std::mutex> lock(s.running);
  ThreadPool::Scope bind(&s.pool, /*hold_cpus=*/true);  // chunk 0 runs here: on the pool's CPUs
  for (std::size_t k = info.num_batch_classes + 1; k-- > 0 && status == 0;) {
    const int64_t size = info.batch_classes[k];
    // Padding: what is left runs as one run of this class when it is the smallest that holds it,
    // through staging copies whose free samples repeat the last real one.
    const bool pad = info.pad_batches && left < size && left > 0 &&
                     left > info.batch_classes[k ? k - 1 : 0];
    for (; (left >= size || pad) && left > 0 && status == 0; left -= size, done += size) {
      char* stage = static_cast<char*>(s.staging.data());
      for (std::size_t t = 0; t < n_in + n_out; ++t) {
        const bool is_in = t < n_in;
        const TensorInfo& info_t = is_in ? info.inputs[t] : info.outputs[t - n_in];
        const uint64_t sample = info_t.batched ? info_t.bytes / per : 0;
        char* user = is_in ? const_cast<char*>(static_cast<const char*>(inputs[t]))
                           : static_cast<char*>(outputs[t - n_in]);
        char* at = user + sample * done;
        if (pad && sample) {
          for (int64_t i = 0; is_in && i < size; ++i)
            std::memcpy(stage + sample * i, at + sample * std::min(i, left - 1), sample);
          at = stage;
          stage += (sample * size + 63) / 64 * 64;
        }
        (is_in ? in[t] : out[t - n_in]) = at;
      }
      in[n_in] = reinterpret_cast<void*>(k);
      status = s.first_use.done()
                   ? s.entry(in, out, s.workspace.data(), s.params.payload())
                   : s.first_use.run_checked(s.hook, s.entry, in, out, s.workspace.data(),
                                             s.params.payload());
      // A padded run's real samples back to the caller: the last run, so `left` samples.
      for (std::size_t t = 0; pad && status == 0 && t < n_out; ++t)
        std::memcpy(static_cast<char*>(outputs[t]) + info.outputs[t].bytes / per * done, out[t],
                    info.outputs[t].bytes / per * left);
      if (pad) left = size;  // the loop then ends
    }
  }
  if (status == 0) return;
  const bool index = status == KILN_STATUS_INDEX_OUT_OF_RANGE;
  throw_error(index ? ErrorCode::kInvalidInput : ErrorCode::kKernel,
              {"kiln: model '", s.info.name, "' ('", s.source, "') failed: ",
               index ? "an index it computed from the inputs is out of range of the axis it "
                       "indexes (as ONNX Gather requires: -N to N-1); the outputs are undefined"
                     : "a kernel returned status ",
               index ? std::string_view() : std::string_view(Num(status))});
}

namespace {

void append_shape(std::string& out, std::span<const int64_t> shape) {
  out += '(';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += shape.size() == 1 ? ",)" : ")";
}

}  // namespace

int64_t Model::check_input_shapes(std::span<const std::span<const int64_t>> shapes) const {
  if (!state_) throw_error(ErrorCode::kInvalidArgument, {"kiln: run on a moved-from Model"});
  const ModelInfo& info = state_->info;
  const std::vector<TensorInfo>& in = info.inputs;
  if (shapes.size() != in.size()) {
    throw_error(ErrorCode::kInvalidInput, {"kiln: model '", info.name, "' takes ",
                                           Num(in.size()), " input(s), got ", Num(shapes.size())});
  }
  int64_t batch = 0;  // of the first batched input; the others must agree
  std::size_t batch_from = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::vector<int64_t>& want = in[i].shape;
    const std::span<const int64_t> got = shapes[i];
    // A batched input may hold any whole number of samples along axis 0.
    const int64_t sample = in[i].batched ? want[0] / info.min_batch : 0;
    const bool rest_equal = std::equal(want.begin() + (sample ? 1 : 0), want.end(),
                                       got.begin() + (sample && !got.empty() ? 1 : 0), got.end());
    if (sample && !got.empty() && rest_equal && got[0] % sample == 0) {
      const int64_t b = got[0] / sample;
      if (b < info.min_batch || b > info.max_batch) {
        throw_error(ErrorCode::kInvalidInput,
                    {"kiln: model '", info.name, "': input ", Num(i), " ('", in[i].name,
                     "') holds a batch of ", Num(static_cast<uint64_t>(b)),
                     " along axis 0, the model takes ", Num(static_cast<uint64_t>(info.min_batch)),
                     " to ", Num(static_cast<uint64_t>(info.max_batch))});
      }
      if (batch && b != batch) {
        throw_error(ErrorCode::kInvalidInput,
                    {"kiln: model '", info.name, "': input ", Num(i), " ('", in[i].name,
                     "') holds a batch of ", Num(static_cast<uint64_t>(b)), ", input ",
                     Num(batch_from), " one of ", Num(static_cast<uint64_t>(batch))});
      }
      batch = b, batch_from = i;
      continue;
    }
    if (!sample && std::equal(want.begin(), want.end(), got.begin(), got.end())) continue;
    std::string got_text, expected;
    append_shape(got_text, got);
    append_shape(expected, want);
    if (sample) expected.replace(1, expected.find_first_of(",)") - 1, "batch");
    throw_error(ErrorCode::kInvalidInput, {"kiln: model '", info.name, "': input ", Num(i),
                                           " ('", in[i].name, "') has shape ", got_text,
                                           ", the model takes ", expected});
  }
  return batch ? batch : (info.max_batch > 0 ? info.min_batch : 1);
}

int64_t Model::run_shaped(std::span<const Tensor> inputs, std::span<void* const> outputs) const {
  constexpr std::size_t kMaxInputs = 64;  // run() allocates nothing: neither does this
  if (inputs.size() > kMaxInputs) {
    throw_error(ErrorCode::kInvalidArgument, {"kiln: run_shaped takes at most ", Num(kMaxInputs),
                                              " inputs, got ", Num(inputs.size())});
  }
  std::span<const int64_t> shapes[kMaxInputs];
  const void* data[kMaxInputs];
  for (std::size_t i = 0; i < inputs.size(); ++i) shapes[i] = inputs[i].shape, data[i] = inputs[i].data;
  const int64_t batch =
      check_input_shapes(std::span<const std::span<const int64_t>>(shapes, inputs.size()));
  check_pointers(std::span<const void* const>(data, inputs.size()), outputs);
  run_batch(data, outputs.data(), batch);
  return batch;
}

void Model::verify_params() const {
  if (!state_) throw_error(ErrorCode::kInvalidArgument, {"kiln: verify on a moved-from Model"});
  std::lock_guard<std::mutex> lock(state_->running);
  state_->first_use.check_all();
}

const std::string& Model::name() const {
  return state_->info.name;
}
const std::vector<TensorInfo>& Model::inputs() const {
  return state_->info.inputs;
}
const std::vector<TensorInfo>& Model::outputs() const {
  return state_->info.outputs;
}
uint64_t Model::workspace_bytes() const {
  return state_->info.workspace_bytes;
}
uint64_t Model::params_bytes() const {
  return state_->info.params_bytes;
}
int64_t Model::min_batch() const {
  return state_->info.min_batch;
}
int64_t Model::max_batch() const {
  return state_->info.max_batch;
}
int Model::num_threads() const {
  return state_->pool.num_threads();
}
const std::string& Model::so_path() const {
  return state_->source;
}

}  // namespace kiln
