// The C API of compiled models: kiln::Model behind status codes (see runtime_c.h).
#include <string>
#include <vector>

#include "c_api.h"
#include "kiln/model.h"
#include "kiln/runtime_c.h"
#include "message.h"

struct kiln_model {
  kiln::Model model;
};

namespace {

using kiln::c_api::fail;
using kiln::c_api::guarded;

kiln_status describe(const kiln_model* model, int32_t index, kiln_tensor_info* out, bool input) {
  const char* what = input ? "kiln_model_input_info" : "kiln_model_output_info";
  if (!model || !out) {
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                kiln::concat({what, ": model or out is NULL"}).c_str());
  }
  const std::vector<kiln::TensorInfo>& list =
      input ? model->model.inputs() : model->model.outputs();
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                kiln::concat({what, ": index ", kiln::Num(index), " is out of range [0, ",
                              kiln::Num(list.size()), ")"})
                    .c_str());
  }
  const kiln::TensorInfo& t = list[static_cast<size_t>(index)];
  *out = kiln_tensor_info{t.name.c_str(), t.dtype.c_str(), static_cast<int32_t>(t.shape.size()),
                          t.shape.data(), t.bytes, t.batched ? 1 : 0};
  return KILN_OK;
}

}  // namespace

extern "C" {

kiln_status kiln_model_load(const char* so_path, const char* params_path, int32_t num_threads,
                            kiln_model** out) {
  if (!out || !so_path || !params_path) {
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_model_load: so_path, params_path or out is NULL");
  }
  *out = nullptr;
  return guarded(
      [&] { *out = new kiln_model{kiln::Model::load(so_path, params_path, num_threads)}; });
}

kiln_status kiln_model_load_static(const kiln_model_entry* entry, const char* params_path,
                                   int32_t num_threads, kiln_model** out) {
  if (!out || !entry || !params_path) {
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_model_load_static: entry, params_path or out is NULL");
  }
  *out = nullptr;
  return guarded([&] {
    *out = new kiln_model{kiln::Model::load_static(*entry, params_path, num_threads)};
  });
}

void kiln_model_free(kiln_model* model) {
  delete model;
}

int32_t kiln_model_num_inputs(const kiln_model* model) {
  return model ? static_cast<int32_t>(model->model.inputs().size()) : 0;
}

int32_t kiln_model_num_outputs(const kiln_model* model) {
  return model ? static_cast<int32_t>(model->model.outputs().size()) : 0;
}

kiln_status kiln_model_input_info(const kiln_model* model, int32_t index, kiln_tensor_info* out) {
  return describe(model, index, out, true);
}

kiln_status kiln_model_output_info(const kiln_model* model, int32_t index, kiln_tensor_info* out) {
  return describe(model, index, out, false);
}

kiln_status kiln_model_run(kiln_model* model, const void* const* inputs, void* const* outputs) {
  if (!model) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: model is NULL");
  const size_t n_in = model->model.inputs().size(), n_out = model->model.outputs().size();
  if ((n_in && !inputs) || !outputs) {
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: inputs or outputs is NULL");
  }
  return guarded([&] {
    model->model.run(std::span<const void* const>(inputs, n_in),
                     std::span<void* const>(outputs, n_out));
  });
}

kiln_status kiln_model_batch_range(const kiln_model* model, int64_t* min_batch,
                                   int64_t* max_batch) {
  if (!model || !min_batch || !max_batch)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_batch_range: an argument is NULL");
  *min_batch = model->model.min_batch();
  *max_batch = model->model.max_batch();
  return KILN_OK;
}

kiln_status kiln_model_verify_params(const kiln_model* model) {
  if (!model) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_verify_params: model is NULL");
  return guarded([&] { model->model.verify_params(); });
}

kiln_status kiln_model_run_shaped(kiln_model* model, const kiln_tensor* inputs, int32_t num_inputs,
                                  void* const* outputs) {
  if (!model) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run_shaped: model is NULL");
  if (num_inputs < 0 || (num_inputs > 0 && !inputs) || !outputs)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_model_run_shaped: inputs or outputs is NULL, or num_inputs is negative");
  for (int32_t i = 0; i < num_inputs; ++i)
    if (inputs[i].ndim < 0 || (inputs[i].ndim > 0 && !inputs[i].shape))
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "kiln_model_run_shaped: an input's ndim is negative or its shape NULL");
  return guarded([&] {
    constexpr int32_t kMaxInputs = 64;
    if (num_inputs > kMaxInputs) {
      throw kiln::RuntimeError(kiln::ErrorCode::kInvalidArgument,
                         "kiln_model_run_shaped: at most 64 inputs");
    }
    kiln::Model::Tensor tensors[kMaxInputs];
    for (int32_t i = 0; i < num_inputs; ++i)
      tensors[i] = {inputs[i].data,
                    std::span<const int64_t>(inputs[i].shape, static_cast<size_t>(inputs[i].ndim))};
    const size_t n_out = model->model.outputs().size();
    model->model.run_shaped(std::span<const kiln::Model::Tensor>(tensors, num_inputs),
                            std::span<void* const>(outputs, n_out));
  });
}

}  // extern "C"
