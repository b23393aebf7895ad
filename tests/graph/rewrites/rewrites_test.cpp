// Each graph rewrite of compiler/graph/rewrites on a small graph of its own: the row alone,
// run on the graph as import, binding and the graph passes leave it, must remove the pattern
// it names and leave a graph that passes the verifier and computes the same outputs as before
// (the reference evaluator on both, where it knows the nodes the row writes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "compiler/base/error.h"
#include "compiler/graph/bind.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "compiler/graph/rewrites/rewrites.h"
#include "compiler/graph/verify.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::attr_float;
using test::attr_int;
using test::attr_ints;
using test::attr_string;
using test::f32_tensor;
using test::ModelBuilder;
using test::random_tensor;

struct Case {
  std::string rewrite;
  std::function<void(ModelBuilder&)> build;
  std::vector<std::string> gone;  // op types present before and absent after
  std::vector<std::string> made;  // op types present after
  // The evaluator knows the nodes the row writes (not kiln's own forms: Gelu, Silu, Attention,
  // MatMul with a bias input, which the compiled-model tests check against the original graph).
  bool evaluate_after = true;
};

int count_op(const Graph& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [&](const Node& n) { return n.op_type == op; }));
}

void scalar(ModelBuilder& b, const std::string& name, double v) {
  b.initializer(name, f32_tensor({}, {v}));
}

// x [1, c, 3, 5] -> Reshape [1, g, c/g, 3, 5] -> Transpose `perm` -> Reshape back -> y, as
// PyTorch exports ShuffleNet's channel_shuffle; the Reshapes' shapes are named s<tag>.
void channel_shuffle(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c,
                     int64_t g, const std::vector<int64_t>& perm = {0, 2, 1, 3, 4}) {
  b.initializer("split_" + y, HostTensor::from_i64(DataType::i64(), {5}, {1, g, c / g, 3, 5}));
  b.initializer("back_" + y, HostTensor::from_i64(DataType::i64(), {4}, {1, c, 3, 5}));
  b.node("Reshape", {x, "split_" + y}, {y + "_split"});
  attr_ints(b.node("Transpose", {y + "_split"}, {y + "_t"}), "perm", perm);
  b.node("Reshape", {y + "_t", "back_" + y}, {y});
}

std::vector<Case> cases() {
  return {
      {"unroll_recurrent",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {3, 1, 2});
         b.initializer("w", random_tensor({1, 4, 2}, 1, 0.5f));
         b.initializer("r", random_tensor({1, 4, 4}, 2, 0.5f));
         attr_int(b.node("RNN", {"x", "w", "r"}, {"y"}), "hidden_size", 4);
         b.output("y");
       },
       {"RNN"},
       {"MatMul", "Tanh"}},
      {"quantized_contrib",
       [](ModelBuilder& b) {
         // Q(x) -> QLinearSigmoid -> QGemm (per-column int8 weights, int32 bias) -> DQ, as
         // ONNX Runtime's quantizer writes them in the QOperator form.
         b.input("x", DataType::f32(), {2, 4});
         scalar(b, "sx", 0.02);
         b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {128}));
         b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
         scalar(b, "ss", 1.0 / 256);
         b.initializer("zs", HostTensor::from_i64(DataType::u8(), {}, {0}));
         b.node("QLinearSigmoid", {"xq", "sx", "zx", "ss", "zs"}, {"sq"})
             .set_domain("com.microsoft");
         std::vector<int64_t> w;
         for (int64_t i = 0; i < 3 * 4; ++i) w.push_back((i * 53) % 255 - 127);
         b.initializer("w", HostTensor::from_i64(DataType::i8(), {3, 4}, w));
         b.initializer("sw", f32_tensor({3}, {0.004, 0.01, 0.002}));
         b.initializer("zw", HostTensor::from_i64(DataType::i8(), {3}, {0, 0, 0}));
         b.initializer("c", HostTensor::from_i64(DataType::i32(), {3}, {500, -70, 0}));
         scalar(b, "sy", 0.01);
         b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {100}));
         auto& gemm = b.node("QGemm", {"sq", "ss", "zs", "w", "sw", "zw", "c", "sy", "zy"}, {"yq"});
         gemm.set_domain("com.microsoft");
         attr_int(gemm, "transB", 1);
         b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
         b.output("y");
       },
       {"QLinearSigmoid"},
       {"Sigmoid", "QGemm"}},  // the QGemm has the int8 dense kernel
      {"quantized_operators",
       [](ModelBuilder& b) {
         // x -> Q -> DQ -> Conv(DQ(int8 weights per channel), DQ(int32 bias)) -> Q -> DQ, as
         // quantize_static writes a convolution between quantized activations.
         b.input("x", DataType::f32(), {1, 2, 5, 5});
         scalar(b, "sx", 0.01);
         b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {120}));
         b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
         b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
         std::vector<int64_t> w;
         for (int64_t i = 0; i < 3 * 2 * 9; ++i) w.push_back((i * 53) % 255 - 127);
         b.initializer("w", HostTensor::from_i64(DataType::i8(), {3, 2, 3, 3}, w));
         b.initializer("sw", f32_tensor({3}, {0.004, 0.01, 0.002}));
         attr_int(b.node("DequantizeLinear", {"w", "sw"}, {"wd"}), "axis", 0);
         b.initializer("bias", HostTensor::from_i64(DataType::i32(), {3}, {500, -70, 0}));
         b.initializer("sb", f32_tensor({3}, {0.01 * 0.004, 0.01 * 0.01, 0.01 * 0.002}));
         attr_int(b.node("DequantizeLinear", {"bias", "sb"}, {"bd"}), "axis", 0);
         attr_ints(b.node("Conv", {"xd", "wd", "bd"}, {"c"}), "pads", {1, 1, 1, 1});
         scalar(b, "sy", 0.05);
         b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {128}));
         b.node("QuantizeLinear", {"c", "sy", "zy"}, {"yq"});
         b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
         b.output("y");
       },
       {"Conv"},
       {"QLinearConv"}},
      {"quantized_elementwise",
       [](ModelBuilder& b) {
         // Q -> DQ -> MaxPool -> Q (one quantization), then DQ(that), DQ(Q(y)) -> Add -> Relu
         // -> Q (zero point 0) -> DQ, as quantize_static writes a residual join.
         b.input("x", DataType::f32(), {1, 2, 6, 6});
         b.input("y", DataType::f32(), {1, 2, 3, 3});
         scalar(b, "sx", 0.02);
         b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {120}));
         b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
         b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
         auto& pool = b.node("MaxPool", {"xd"}, {"m"});
         attr_ints(pool, "kernel_shape", {2, 2});
         attr_ints(pool, "strides", {2, 2});
         b.node("QuantizeLinear", {"m", "sx", "zx"}, {"mq"});
         b.node("DequantizeLinear", {"mq", "sx", "zx"}, {"md"});
         scalar(b, "sy", 0.03);
         b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {100}));
         b.node("QuantizeLinear", {"y", "sy", "zy"}, {"yq"});
         b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"yd"});
         b.node("Add", {"md", "yd"}, {"a"});
         b.node("Relu", {"a"}, {"r"});
         scalar(b, "so", 0.04);
         b.initializer("zo", HostTensor::from_i64(DataType::u8(), {}, {0}));
         b.node("QuantizeLinear", {"r", "so", "zo"}, {"oq"});
         b.node("DequantizeLinear", {"oq", "so", "zo"}, {"out"});
         b.output("out");
       },
       {"Add", "Relu"},
       {"QLinearAdd", "MaxPool"},
       // QLinearAdd rounds as ONNX Runtime's kernel, not as the three f32 steps (a quantum
       // apart on a few sums): the compiled-model tests check it within that.
       false},
      {"quantize_dequantize",
       [](ModelBuilder& b) {
         // 16-bit (8-bit pairs have kernels). Scale 1/50000 around 30000: inputs in [-1, 1)
         // reach both ends of uint16 and saturate.
         b.input("x", DataType::f32(), {2, 8});
         scalar(b, "s", 0.00002);
         b.initializer("z", HostTensor::from_i64(DataType::u16(), {}, {30000}));
         b.node("QuantizeLinear", {"x", "s", "z"}, {"q"});
         b.node("DequantizeLinear", {"q", "s", "z"}, {"d"});
         b.node("Relu", {"d"}, {"y"});
         b.output("y");
       },
       {"DequantizeLinear"},
       {"Round", "Clip"}},
      {"decompose_ops",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 5});
         attr_int(b.node("LogSoftmax", {"x"}, {"y"}), "axis", 1);
         b.output("y");
       },
       {"LogSoftmax"},
       {}},
      {"split_to_slices",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 6});
         b.initializer("parts", HostTensor::i64_vector({2, 4}));
         attr_int(b.node("Split", {"x", "parts"}, {"a", "c"}), "axis", 1);
         b.output("a");
         b.output("c");
       },
       {"Split"},
       {"Slice"}},
      {"split_variadic",
       [](ModelBuilder& b) {
         for (const char* x : {"a", "c", "d"}) b.input(x, DataType::f32(), {2, 3});
         b.node("Max", {"a", "c", "d"}, {"y"});
         b.output("y");
       },
       {},
       {"Max"}},
      {"instance_norm_to_layer_norm",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {1, 2, 3, 3});
         b.initializer("s", random_tensor({2}, 1));
         b.initializer("bias", random_tensor({2}, 2));
         b.node("InstanceNormalization", {"x", "s", "bias"}, {"y"});
         b.output("y");
       },
       {"InstanceNormalization"},
       {"LayerNormalization"}},
      {"where_to_arithmetic",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 3});
         b.initializer("c", HostTensor::from_i64(DataType::boolean(), {2, 3}, {1, 0, 0, 1, 1, 0}));
         scalar(b, "k", -1e9);
         b.node("Where", {"c", "k", "x"}, {"y"});
         b.output("y");
       },
       {"Where"},
       {}},
      {"fuse_layer_norm",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 3, 8});
         attr_ints(b.node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
         b.node("Sub", {"x", "mean"}, {"d"});
         scalar(b, "two", 2.0);
         b.node("Pow", {"d", "two"}, {"sq"});
         attr_ints(b.node("ReduceMean", {"sq"}, {"var"}), "axes", {2});
         scalar(b, "eps", 1e-5);
         b.node("Add", {"var", "eps"}, {"ve"});
         b.node("Sqrt", {"ve"}, {"sd"});
         b.node("Div", {"d", "sd"}, {"y"});
         b.output("y");
       },
       {"ReduceMean", "Sqrt"},
       {"LayerNormalization"}},
      {"fuse_gelu",
       [](ModelBuilder& b) {
         b.input("h", DataType::f32(), {2, 8});
         scalar(b, "sqrt2", std::sqrt(2.0));
         scalar(b, "one", 1.0);
         scalar(b, "half", 0.5);
         b.node("Div", {"h", "sqrt2"}, {"hs"});
         b.node("Erf", {"hs"}, {"he"});
         b.node("Add", {"he", "one"}, {"h1"});
         b.node("Mul", {"h", "h1"}, {"hm"});
         b.node("Mul", {"hm", "half"}, {"y"});
         b.output("y");
       },
       {"Erf"},
       {"Gelu"},
       /*evaluate_after=*/false},
      {"fuse_self_gated",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 8});
         b.node("Sigmoid", {"x"}, {"s"});
         b.node("Mul", {"x", "s"}, {"y"});
         b.output("y");
       },
       {"Sigmoid"},
       {"Silu"},
       /*evaluate_after=*/false},
      {"fuse_channel_shuffle",
       [](ModelBuilder& b) {
         b.input("a", DataType::f32(), {1, 4, 3, 5});
         b.input("b", DataType::f32(), {1, 4, 3, 5});
         attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
         channel_shuffle(b, "cat", "y", 8, 2);
         b.output("y");
       },
       {"Concat", "Transpose", "Reshape"},
       {"ChannelShuffle"},
       /*evaluate_after=*/false},
      {"lift_1d_to_2d",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {1, 2, 9});
         b.initializer("w", random_tensor({3, 2, 3}, 1, 0.5f));
         attr_ints(b.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1});
         b.output("y");
       },
       {},
       {"Conv"}},
      {"explicit_pads",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {1, 2, 6, 6});
         b.initializer("w", random_tensor({3, 2, 3, 3}, 1, 0.5f));
         auto& conv = b.node("Conv", {"x", "w"}, {"y"});
         attr_string(conv, "auto_pad", "SAME_UPPER");
         attr_ints(conv, "strides", {2, 2});
         b.output("y");
       },
       {},
       {"Conv", "Pad"}},
      {"prune_dead_taps",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {1, 2, 3, 3});
         b.initializer("w", random_tensor({3, 2, 3, 3}, 1, 0.5f));
         auto& conv = b.node("Conv", {"x", "w"}, {"y"});
         attr_ints(conv, "dilations", {4, 4});
         attr_ints(conv, "pads", {4, 4, 4, 4});
         b.output("y");
       },
       {},
       {"Conv"}},
      {"scale_matmul_operand",
       [](ModelBuilder& b) {
         b.input("a", DataType::f32(), {2, 4, 8});
         b.initializer("w", random_tensor({8, 16}, 1));  // the product is larger than either
         b.node("MatMul", {"a", "w"}, {"p"});
         scalar(b, "d", 2.0);
         b.node("Div", {"p", "d"}, {"y"});
         b.output("y");
       },
       {},
       {"Div", "MatMul"}},  // the Div moves onto the operand: the outputs tell
      {"fuse_attention",
       [](ModelBuilder& b) {
         for (const char* x : {"q", "k", "v"}) b.input(x, DataType::f32(), {1, 2, 5, 4});
         attr_ints(b.node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
         b.node("MatMul", {"q", "kt"}, {"s"});
         attr_int(b.node("Softmax", {"s"}, {"p"}), "axis", -1);
         b.node("MatMul", {"p", "v"}, {"y"});
         b.output("y");
       },
       {"Softmax"},
       {"Attention"},
       /*evaluate_after=*/false},
      {"fuse_matmul_bias",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2, 3, 4});
         b.initializer("w", random_tensor({4, 5}, 1));
         b.initializer("bias", random_tensor({5}, 2));
         b.node("MatMul", {"x", "w"}, {"m"});
         b.node("Add", {"m", "bias"}, {"y"});
         b.output("y");
       },
       {"Add"},
       {"MatMul"},
       /*evaluate_after=*/false},
      {"copy_constant_outputs",
       [](ModelBuilder& b) {
         b.input("x", DataType::f32(), {2});
         b.node("Relu", {"x"}, {"y"});
         b.initializer("c", random_tensor({3}, 1));
         b.node("Identity", {"c"}, {"points"});
         b.output("y");
         b.output("points");
       },
       {},
       {"Identity"}},
  };
}

// The graph as the rewrites receive it, with random values for its inputs.
Graph prepared(const Case& c, std::map<std::string, HostTensor>& inputs) {
  ModelBuilder b(14);
  c.build(b);
  Graph g = import_onnx_bytes(b.bytes(), c.rewrite + ".onnx");
  bind_input_shapes(g, {});
  run_graph_passes(g);
  uint32_t seed = 3;
  for (const std::string& in : g.inputs) {
    const ValueType t = *g.type_of(in);
    inputs[in] = t.dtype == DataType::f32() ? random_tensor(t.dims(), seed++)
                                            : HostTensor(t.dtype, t.dims());
  }
  return g;
}

class EachRewrite : public ::testing::TestWithParam<Case> {};

TEST_P(EachRewrite, RemovesItsPatternAndKeepsTheOutputs) {
  const Case& c = GetParam();
  std::map<std::string, HostTensor> inputs;
  Graph g = prepared(c, inputs);
  const auto before = evaluate(g, inputs);
  for (const std::string& op : c.gone) EXPECT_GT(count_op(g, op), 0) << op << " before";
  const int nodes_before = static_cast<int>(g.nodes.size());

  const int sites = graph_rewrite(c.rewrite).run(g, RewriteOptions{});
  EXPECT_GT(sites, 0) << c.rewrite << " found nothing to rewrite";
  verify_graph(g, c.rewrite, /*types_inferred=*/false);
  for (const std::string& op : c.gone) EXPECT_EQ(count_op(g, op), 0) << op << " after";
  for (const std::string& op : c.made) EXPECT_GT(count_op(g, op), 0) << op << " after";
  if (c.gone.empty() && c.made.empty()) EXPECT_NE(static_cast<int>(g.nodes.size()), nodes_before);

  // Rows after it see types and folded constants (the infer_new_types row).
  graph_rewrite("infer_new_types").run(g, RewriteOptions{});
  verify_graph(g, c.rewrite, /*types_inferred=*/true);
  if (!c.evaluate_after) return;
  const auto after = evaluate(g, inputs);
  for (const std::string& out : g.outputs) {
    const std::vector<double> want = before.at(out).to_f64(), got = after.at(out).to_f64();
    ASSERT_EQ(got.size(), want.size()) << out;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << out << "[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, EachRewrite, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.rewrite; });

// The shuffle's Concat is folded in only where nothing else reads it and its inputs begin at
// multiples of a group's run; a Transpose that is not the group swap is no shuffle.
TEST(FuseChannelShuffle, FoldsOnlyTheConcatsItMay) {
  auto fused = [](const std::function<void(ModelBuilder&)>& build) {
    ModelBuilder b(14);
    build(b);
    Graph g = import_onnx_bytes(b.bytes(), "shuffle.onnx");
    bind_input_shapes(g, {});
    run_graph_passes(g);
    graph_rewrite("fuse_channel_shuffle").run(g, RewriteOptions{});
    for (const Node& n : g.nodes)
      if (n.op_type == "ChannelShuffle") return n;
    return Node{};
  };
  const Node two = fused([](ModelBuilder& b) {
    b.input("a", DataType::f32(), {1, 6, 3, 5});
    b.input("b", DataType::f32(), {1, 6, 3, 5});
    attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
    channel_shuffle(b, "cat", "y", 12, 2);
    b.output("y");
  });
  EXPECT_EQ(two.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(two.attr_int("group", 0), 2);
  // 4 + 8 channels in 3 groups: runs of 4, and the second input begins at 4, so the Concat
  // folds. In 2 groups (runs of 6) it begins inside a run, so it does not.
  const Node three = fused([](ModelBuilder& b) {
    b.input("a", DataType::f32(), {1, 4, 3, 5});
    b.input("b", DataType::f32(), {1, 8, 3, 5});
    attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
    channel_shuffle(b, "cat", "y", 12, 3);
    b.output("y");
  });
  EXPECT_EQ(three.inputs.size(), 2u);
  EXPECT_EQ(three.attr_int("group", 0), 3);
  const Node off_runs = fused([](ModelBuilder& b) {
    b.input("a", DataType::f32(), {1, 4, 3, 5});
    b.input("b", DataType::f32(), {1, 8, 3, 5});
    attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
    channel_shuffle(b, "cat", "y", 12, 2);
    b.output("y");
  });
  EXPECT_EQ(off_runs.inputs, (std::vector<std::string>{"cat"}));
  const Node read_twice = fused([](ModelBuilder& b) {
    b.input("a", DataType::f32(), {1, 6, 3, 5});
    b.input("b", DataType::f32(), {1, 6, 3, 5});
    attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
    channel_shuffle(b, "cat", "y", 12, 2);
    b.node("Relu", {"cat"}, {"r"});
    b.output("y");
    b.output("r");
  });
  EXPECT_EQ(read_twice.inputs, (std::vector<std::string>{"cat"}));
  const Node no_swap = fused([](ModelBuilder& b) {
    b.input("x", DataType::f32(), {1, 12, 3, 5});
    channel_shuffle(b, "x", "y", 12, 2, {0, 1, 2, 4, 3});
    b.output("y");
  });
  EXPECT_TRUE(no_swap.op_type.empty());
}

// The table is the whole pass list: every row has a name, purpose and invariant, names are
// unique, and every row but the two repeats has a test above.
TEST(RewriteTable, EveryRowIsDescribedAndTested) {
  std::vector<std::string> tested;
  for (const Case& c : cases()) tested.push_back(c.rewrite);
  std::vector<std::string> names;
  for (const GraphRewrite& r : graph_rewrites()) {
    EXPECT_TRUE(r.name && *r.name && r.purpose && *r.purpose && r.establishes && *r.establishes);
    EXPECT_EQ(std::count(names.begin(), names.end(), r.name), 0) << r.name;
    names.push_back(r.name);
    const std::string n = r.name;
    if (n == "infer_new_types" || n == "explicit_pads_after_pruning") continue;
    EXPECT_NE(std::find(tested.begin(), tested.end(), n), tested.end()) << n << " has no test";
  }
  EXPECT_THROW(graph_rewrite("no_such_rewrite"), InternalError);
}

// The whole table on one graph, verifier on after each row, with its summary of what it did.
TEST(RewriteTable, RunsInOrderWithTheVerifier) {
  std::map<std::string, HostTensor> inputs;
  const std::vector<Case> all = cases();
  const auto layer_norm = std::find_if(all.begin(), all.end(),
                                       [](const Case& c) { return c.rewrite == "fuse_layer_norm"; });
  ASSERT_NE(layer_norm, all.end());
  Graph g = prepared(*layer_norm, inputs);  // the written-out layer norm
  RewriteOptions o;
  o.verify = true;
  const std::vector<RewriteCount> counts = run_rewrites(g, o);
  ASSERT_EQ(counts.size(), graph_rewrites().size());
  EXPECT_NE(rewrite_summary(counts).find("1 fuse_layer_norm"), std::string::npos)
      << rewrite_summary(counts);
  EXPECT_EQ(count_op(g, "LayerNormalization"), 1);
}

}  // namespace
}  // namespace kiln::graph
