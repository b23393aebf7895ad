// The runtime's parser of kiln_model_info records (private to the runtime, runtime/src): what
// it accepts, and a clear error naming the line for everything it does not.
#include "model_info.h"

#include <gtest/gtest.h>

#include "kiln/runtime.h"

namespace kiln::testing {
namespace {

const char* kGood =
    "kiln-model 2\n"
    "name resnet18\n"
    "workspace 4096\n"
    "params 1000 00000000deadbeef\n"
    "verify 0 1 5 3\n"
    "input data f32 4 1 3 224 224\n"
    "input flag bool 0\n"
    "output prob bf16 2 1 1000\n";

TEST(ModelInfo, ParsesEveryField) {
  const ModelInfo info = parse_model_info(kGood, "m.so");
  EXPECT_EQ(info.name, "resnet18");
  EXPECT_EQ(info.workspace_bytes, 4096u);
  EXPECT_EQ(info.params_bytes, 1000u);
  EXPECT_EQ(info.params_checksum, 0xdeadbeefu);
  EXPECT_EQ(info.verify, " 0 1 5 3");  // read by ParamsFirstUse as the first run goes
  ASSERT_EQ(info.inputs.size(), 2u);
  EXPECT_EQ(info.inputs[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(info.inputs[0].bytes, 3u * 224 * 224 * 4);
  EXPECT_TRUE(info.inputs[1].shape.empty());
  EXPECT_EQ(info.inputs[1].bytes, 1u);
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].dtype, "bf16");
  EXPECT_EQ(info.outputs[0].bytes, 2000u);
}

TEST(ModelInfo, DtypeSizes) {
  EXPECT_EQ(dtype_bytes("f32"), 4u);
  EXPECT_EQ(dtype_bytes("bf16"), 2u);
  EXPECT_EQ(dtype_bytes("i64"), 8u);
  EXPECT_EQ(dtype_bytes("bool"), 1u);
  EXPECT_EQ(dtype_bytes("f8"), 0u);
}

void expect_malformed(const std::string& text, const std::string& fragment) {
  try {
    parse_model_info(text, "m.so");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kLoad);
    const std::string what = e.what();
    EXPECT_NE(what.find("'m.so' has a malformed kiln_model_info"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << what;
  }
}

TEST(ModelInfo, RefusesMalformedRecords) {
  const std::string head = "kiln-model 2\nname m\nworkspace 0\nparams 0 cbf29ce484222325\n";
  expect_malformed("", "empty record");
  expect_malformed("kiln-model 3\n", "line 1: format version 3, this runtime reads 2");
  expect_malformed("kiln-model 1\n", "line 1: format version 1, this runtime reads 2 (rebuild");
  expect_malformed("model 1\n", "line 1: expected 'kiln-model VERSION'");
  expect_malformed("kiln-model 2\nname m\n", "missing one of");
  expect_malformed(head, "no outputs");
  expect_malformed(head + "output y f32 2 1\n", "line 5: rank 2 but 1 dimensions");
  expect_malformed(head + "output y f7 1 1\n", "unknown dtype 'f7'");
  expect_malformed(head + "output y f32 1 -4\n", "dimension '-4' is not a number");
  expect_malformed(head + "output y f32 1 4x\n", "dimension '4x' is not a number");
  expect_malformed(head + "output y f32 2 4294967296 4294967296\n", "too large");
  expect_malformed(head + "output y\n", "expected 'output NAME DTYPE RANK DIMS...'");
  expect_malformed(head + "colour blue\n", "unexpected 'colour blue'");
  expect_malformed("kiln-model 2\nname m\nworkspace 0\nparams 0 cbf2\noutput y f32 0\n",
                   "16 hex digits");
  expect_malformed("kiln-model 2\nname m\nworkspace lots\n", "workspace bytes 'lots'");
}

}  // namespace
}  // namespace kiln::testing
