// XGBoost's C API, checked and owned: every call goes through check(), which turns a
// failure into a kiln error naming the call and XGBoost's own message, and the DMatrix and
// Booster handles free themselves. Private to cost_model/ (cost_model.h keeps the C API out
// of its users' includes).
#pragma once

#include <xgboost/c_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cost_model::xgb {

// UserError "XGBoost <call> failed: <XGBGetLastError()>" when rc is not 0. XGBoost fails on
// what it is given (a corrupt model file, a parameter out of range), so it is the caller's
// input that is wrong; kiln checks its own invariants before calling.
void check(int rc, const char* call);

// A dense row-major matrix of `rows` x `cols` floats, with optional labels and groups.
class DMatrix {
 public:
  DMatrix(const std::vector<float>& data, size_t rows, size_t cols);
  ~DMatrix();
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  void set_labels(const std::vector<float>& labels);
  // Sizes of consecutive row groups (ranking objectives compare rows within a group).
  void set_group_sizes(const std::vector<unsigned>& sizes);
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

class Booster {
 public:
  // A booster to train on `train`, or (null) one that a model is loaded into.
  explicit Booster(const DMatrix* train);
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  void set_param(const std::string& name, const std::string& value);
  void update_one_iter(int iter, const DMatrix& train);
  std::vector<float> predict(const DMatrix& data) const;
  size_t feature_count() const;
  std::vector<char> save_to_buffer() const;  // UBJSON
  void load_from_buffer(const std::vector<char>& bytes);

 private:
  BoosterHandle handle_ = nullptr;
};

}  // namespace kiln::cost_model::xgb
