#include "cost_model/xgboost_handles.h"

#include <limits>

#include "compiler/base/error.h"

namespace kiln::cost_model::xgb {

void check(int rc, const char* call) {
  user_check(rc == 0) << "XGBoost " << call << " failed: " << XGBGetLastError();
}

DMatrix::DMatrix(const std::vector<float>& data, size_t rows, size_t cols) {
  internal_check(data.size() == rows * cols)
      << "a " << rows << " x " << cols << " matrix from " << data.size() << " values";
  // NaN marks a missing value; the cost model's features never are.
  check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                               &handle_),
        "XGDMatrixCreateFromMat");
}

DMatrix::~DMatrix() {
  if (handle_) XGDMatrixFree(handle_);
}

void DMatrix::set_labels(const std::vector<float>& labels) {
  check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo(label)");
}

void DMatrix::set_group_sizes(const std::vector<unsigned>& sizes) {
  check(XGDMatrixSetUIntInfo(handle_, "group", sizes.data(), sizes.size()),
        "XGDMatrixSetUIntInfo(group)");
}

Booster::Booster(const DMatrix* train) {
  DMatrixHandle d = train ? train->get() : nullptr;
  check(XGBoosterCreate(train ? &d : nullptr, train ? 1 : 0, &handle_), "XGBoosterCreate");
}

Booster::~Booster() {
  if (handle_) XGBoosterFree(handle_);
}

void Booster::set_param(const std::string& name, const std::string& value) {
  check(XGBoosterSetParam(handle_, name.c_str(), value.c_str()),
        ("XGBoosterSetParam(" + name + "=" + value + ")").c_str());
}

void Booster::update_one_iter(int iter, const DMatrix& train) {
  check(XGBoosterUpdateOneIter(handle_, iter, train.get()), "XGBoosterUpdateOneIter");
}

std::vector<float> Booster::predict(const DMatrix& data) const {
  // Plain predictions (type 0) from every tree, one value per row.
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0,)"
      R"( "strict_shape": false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(handle_, data.get(), config, &shape, &dims, &result),
        "XGBoosterPredictFromDMatrix");
  size_t n = 1;
  for (bst_ulong i = 0; i < dims; ++i) n *= shape[i];
  return std::vector<float>(result, result + n);
}

size_t Booster::feature_count() const {
  bst_ulong n = 0;
  check(XGBoosterGetNumFeature(handle_, &n), "XGBoosterGetNumFeature");
  return n;
}

std::vector<char> Booster::save_to_buffer() const {
  bst_ulong len = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &len, &bytes),
        "XGBoosterSaveModelToBuffer");
  return std::vector<char>(bytes, bytes + len);
}

void Booster::load_from_buffer(const std::vector<char>& bytes) {
  check(XGBoosterLoadModelFromBuffer(handle_, bytes.data(), bytes.size()),
        "XGBoosterLoadModelFromBuffer");
}

}  // namespace kiln::cost_model::xgb
