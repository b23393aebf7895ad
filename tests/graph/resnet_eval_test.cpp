// The reference evaluator on a whole network: ResNet-18 (random weights, built as an ONNX
// model with a symbolic batch and the Shape/Gather/Concat/Reshape flatten that PyTorch
// exports), imported, bound to batch 1, run through the passes and evaluated. It must stay
// well under a minute; the time is printed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "compiler/graph/bind.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

class ResNetBuilder {
 public:
  ModelBuilder b{13};

  std::string conv_bn(const std::string& in, const std::string& name, int64_t cin, int64_t cout,
                      int64_t k, int64_t stride, bool relu) {
    b.initializer(name + ".w",
                  test::random_tensor({cout, cin, k, k}, seed_++,
                                      std::sqrt(2.0f / static_cast<float>(cin * k * k))));
    onnx::NodeProto& conv = b.node("Conv", {in, name + ".w"}, {name + ".conv"}, name);
    test::attr_ints(conv, "kernel_shape", {k, k});
    test::attr_ints(conv, "strides", {stride, stride});
    test::attr_ints(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
    b.initializer(name + ".gamma", test::random_tensor({cout}, seed_++, 0.2f));
    b.initializer(name + ".beta", test::random_tensor({cout}, seed_++, 0.1f));
    b.initializer(name + ".mean", test::random_tensor({cout}, seed_++, 0.1f));
    HostTensor var = test::random_tensor({cout}, seed_++, 0.5f);
    for (int64_t i = 0; i < cout; ++i) var.data<float>()[i] += 1.0f;
    b.initializer(name + ".var", var);
    b.node("BatchNormalization",
           {name + ".conv", name + ".gamma", name + ".beta", name + ".mean", name + ".var"},
           {name + ".bn"});
    if (!relu) return name + ".bn";
    b.node("Relu", {name + ".bn"}, {name + ".out"});
    return name + ".out";
  }

  std::string basic_block(const std::string& in, const std::string& name, int64_t cin, int64_t cout,
                          int64_t stride) {
    std::string a = conv_bn(in, name + ".a", cin, cout, 3, stride, true);
    std::string c = conv_bn(a, name + ".b", cout, cout, 3, 1, false);
    std::string shortcut = in;
    if (stride != 1 || cin != cout)
      shortcut = conv_bn(in, name + ".down", cin, cout, 1, stride, false);
    b.node("Add", {c, shortcut}, {name + ".sum"});
    b.node("Relu", {name + ".sum"}, {name + ".out"});
    return name + ".out";
  }

  void build() {
    b.input("image", DataType::f32(), {std::string("N"), int64_t{3}, int64_t{224}, int64_t{224}});
    std::string x = conv_bn("image", "stem", 3, 64, 7, 2, true);
    onnx::NodeProto& pool = b.node("MaxPool", {x}, {"pool"});
    test::attr_ints(pool, "kernel_shape", {3, 3});
    test::attr_ints(pool, "strides", {2, 2});
    test::attr_ints(pool, "pads", {1, 1, 1, 1});
    x = "pool";
    int64_t cin = 64;
    const int64_t widths[] = {64, 128, 256, 512};
    for (int layer = 0; layer < 4; ++layer) {
      for (int block = 0; block < 2; ++block) {
        const int64_t stride = layer > 0 && block == 0 ? 2 : 1;
        x = basic_block(x, "layer" + std::to_string(layer + 1) + "." + std::to_string(block), cin,
                        widths[layer], stride);
        cin = widths[layer];
      }
    }
    b.node("GlobalAveragePool", {x}, {"gap"});
    // PyTorch's flatten with a symbolic batch: Reshape(gap, Concat(Shape(gap)[0:1], [-1])).
    b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
    b.initializer("axes0", HostTensor::i64_vector({0}));
    b.initializer("minus_one", HostTensor::i64_vector({-1}));
    b.node("Shape", {"gap"}, {"gap_shape"});
    b.node("Gather", {"gap_shape", "zero"}, {"batch"});
    b.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
    test::attr_int(b.node("Concat", {"batch1", "minus_one"}, {"flat_shape"}), "axis", 0);
    b.node("Reshape", {"gap", "flat_shape"}, {"flat"});
    b.initializer("fc.w", test::random_tensor({1000, 512}, seed_++, 0.05f));
    b.initializer("fc.b", test::random_tensor({1000}, seed_++, 0.01f));
    test::attr_int(b.node("Gemm", {"flat", "fc.w", "fc.b"}, {"logits"}), "transB", 1);
    b.output("logits");
  }

 private:
  uint32_t seed_ = 1;
};

TEST(ReferenceEvaluator, ResNet18AtBatch1) {
  ResNetBuilder net;
  net.build();
  const std::string bytes = net.b.bytes();
  auto start = std::chrono::steady_clock::now();
  Graph g = import_onnx_bytes(bytes, "resnet18.onnx");
  bind_input_shapes(g, {{"image", {1, 3, 224, 224}}});
  run_graph_passes(g);
  auto compiled = std::chrono::steady_clock::now();
  // The flatten's shape computation folded away.
  for (const Node& n : g.nodes) EXPECT_NE(n.op_type, "Shape");
  EXPECT_EQ(g.type_of("flat")->dims(), (std::vector<int64_t>{1, 512}));

  HostTensor image = test::random_tensor({1, 3, 224, 224}, 99);
  HostTensor logits = evaluate(g, {{"image", image}}).at("logits");
  auto done = std::chrono::steady_clock::now();
  EXPECT_EQ(logits.shape(), (std::vector<int64_t>{1, 1000}));
  double norm = 0;
  for (double v : logits.to_f64()) {
    ASSERT_TRUE(std::isfinite(v));
    norm += v * v;
  }
  EXPECT_GT(norm, 0);
  const double import_s = std::chrono::duration<double>(compiled - start).count();
  const double eval_s = std::chrono::duration<double>(done - compiled).count();
  std::cout << "[resnet18] import + passes " << import_s << " s, evaluation " << eval_s << " s ("
            << g.nodes.size() << " nodes, " << bytes.size() / 1e6 << " MB model)\n";
  EXPECT_LT(eval_s, 60.0);
}

}  // namespace
}  // namespace kiln::graph
