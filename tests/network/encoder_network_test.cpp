// A transformer encoder layer exported by PyTorch (tests/network/export_encoder.py, run at
// build time) compiled with its symbolic sequence length bound, and compared with the graph's
// reference evaluator, which the ONNX conformance tests check.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/network/network_check.h"

namespace kiln::network::test {
namespace {

std::string read_model(const std::string& form) {
  std::string path = std::string(KILN_ENCODER_MODELS) + "/encoder_op" + form + ".onnx";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

class EncoderLayer : public ::testing::TestWithParam<std::string> {};

TEST_P(EncoderLayer, MatchesReferenceWithBoundSequenceLength) {
  std::string bytes = read_model(GetParam());
  if (bytes.empty()) GTEST_SKIP() << "no exported encoder (Debian's python3-torch is missing)";
  for (int64_t seq : {5, 16}) {
    CompileReport r = expect_host_matches_reference(bytes, {{"seq", {seq}}});
    std::vector<std::string> ops = layer_ops(r);
    // Every layer norm is one kernel, decomposed (opset 13) or not; GELU one kernel.
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "LayerNormalization"), 2);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "ReduceMean"), 0);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Erf"), 0);
    if (GetParam().find("gelu") != std::string::npos)
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Gelu"), 1);
  }
}

// The same layer cross-compiled for AArch64 NEON and run under qemu (opset 13: the
// decomposed forms, so the rewrites and every kernel kind run on ARM too).
TEST(EncoderLayerArm, NeonUnderQemu) {
  std::string bytes = read_model("13_gelu");
  if (bytes.empty()) GTEST_SKIP() << "no exported encoder (Debian's python3-torch is missing)";
  std::string skip = expect_arm_neon_matches_reference(bytes, {{"seq", {6}}});
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Token ids and an attention mask as int64 inputs: an embedding lookup, the mask compared,
// expanded over the heads and selected into the scores, as BERT-like models export.
TEST(EmbeddingEncoder, TokenIdsAndPaddingMaskMatchReference) {
  std::string path = std::string(KILN_ENCODER_MODELS) + "/embedding_encoder_op14.onnx";
  std::ifstream f(path, std::ios::binary);
  if (!f) GTEST_SKIP() << "no exported encoder (Debian's python3-torch is missing)";
  std::ostringstream bytes;
  bytes << f.rdbuf();
  const int64_t seq = 7;
  graph::HostTensor ids = graph::HostTensor::from_i64(graph::DataType::i64(), {1, seq},
                                                      {3, 17, 42, 0, 49, 8, 21});
  graph::HostTensor mask = graph::HostTensor::from_i64(graph::DataType::i64(), {1, seq},
                                                       {1, 1, 1, 1, 1, 0, 0});
  CompileReport r = expect_host_matches_reference(bytes.str(), {{"seq", {seq}}},
                                                  {{"input_ids", ids}, {"attention_mask", mask}});
  std::vector<std::string> ops = layer_ops(r);
  for (const char* op : {"Gather", "Equal", "Expand", "Where"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op << " was not compiled";
}

INSTANTIATE_TEST_SUITE_P(Torch, EncoderLayer, ::testing::Values("13_gelu", "14_relu", "17_gelu"),
                         [](const auto& info) { return "opset" + info.param; });

}  // namespace
}  // namespace kiln::network::test
