// Bad models and bad bindings: each must fail with one kiln::UserError whose message names
// the file, the node (index, name, op type) where there is one, and what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "compiler/graph/bind.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

// The message of the UserError `body` throws ("" and a test failure when it throws none).
template <typename F>
std::string user_error_of(F body) {
  try {
    body();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

// x[1,4] -> Relu -> y: a valid model to break in different ways.
ModelBuilder relu_model() {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "relu0");
  b.output("y");
  return b;
}

TEST(OnnxErrors, RandomBytesAreNotAModel) {
  std::mt19937 rng(7);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  std::string msg = user_error_of([&] { import_onnx_bytes(bytes, "noise.onnx"); });
  EXPECT_CONTAINS(msg, "noise.onnx: not an ONNX model");
}

TEST(OnnxErrors, MissingFileIsNamed) {
  std::string msg = user_error_of([] { import_onnx_file("no-such-dir/model.onnx"); });
  EXPECT_CONTAINS(msg, "no-such-dir/model.onnx: cannot open the file");
}

TEST(OnnxErrors, TruncatedModelFailsCleanly) {
  // A model with weights, cut at many points: every prefix either imports or fails with a
  // UserError naming the file; none crashes.
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}});
  b.initializer("w", test::random_tensor({4, 3, 3, 3}, 1));
  b.initializer("bias", test::random_tensor({4}, 2));
  b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv0");
  b.output("y");
  const std::string full = b.bytes();
  int failures = 0;
  for (size_t cut = 1; cut < full.size(); cut += 7) {
    try {
      import_onnx_bytes(full.substr(0, cut), "cut.onnx");
    } catch (const UserError& e) {
      ++failures;
      EXPECT_CONTAINS(e.what(), "cut.onnx");
    }
  }
  EXPECT_GT(failures, 0);
  // The halfway cut lands inside the weights: the protobuf does not parse.
  std::string msg =
      user_error_of([&] { import_onnx_bytes(full.substr(0, full.size() / 2), "cut.onnx"); });
  EXPECT_CONTAINS(msg, "cut.onnx: not an ONNX model");
}

TEST(OnnxErrors, UnsupportedOperatorNamesTheNode) {
  ModelBuilder b = relu_model();
  b.node("FrobnicateV2", {"y"}, {"z"}, "frob");
  b.output("z");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg,
                  "m.onnx: node 1 'frob' (FrobnicateV2): operator 'FrobnicateV2' is not "
                  "supported by kiln");
}

TEST(OnnxErrors, ControlFlowIsUnsupported) {
  ModelBuilder b = relu_model();
  onnx::NodeProto& n = b.node("If", {"y"}, {"z"}, "branch");
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("then");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "node 1 'branch' (If)");
  EXPECT_CONTAINS(msg, "subgraph");
}

TEST(OnnxErrors, ForeignDomainIsUnsupported) {
  ModelBuilder b = relu_model();
  b.node("FusedConv", {"y"}, {"z"}, "fc").set_domain("com.microsoft");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "node 1 'fc' (FusedConv): operator domain 'com.microsoft' is not supported");
}

TEST(OnnxErrors, UnsupportedAttributeIsNamed) {
  ModelBuilder b = relu_model();
  test::attr_int(b.model.mutable_graph()->mutable_node(0)[0], "inplace", 1);
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "node 0 'relu0' (Relu): attribute 'inplace' is not supported");
}

TEST(OnnxErrors, UnsupportedAttributeValueNamesNodeAtInference) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  onnx::NodeProto& n = b.node("MaxPool", {"x"}, {"y"}, "pool");
  test::attr_ints(n, "kernel_shape", {2, 2});
  test::attr_string(n, "auto_pad", "SAME_MIDDLE");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  std::string msg = user_error_of([&] { run_graph_passes(g); });
  EXPECT_CONTAINS(msg,
                  "m.onnx: node 0 'pool' (MaxPool): MaxPool auto_pad 'SAME_MIDDLE' is not one of");
}

TEST(OnnxErrors, ExternalDataIsUnsupported) {
  ModelBuilder b = relu_model();
  onnx::TensorProto* w = b.model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "m.onnx: initializer 'w' keeps its data in an external file");
}

TEST(OnnxErrors, WrongWeightSizeIsNamed) {
  ModelBuilder b = relu_model();
  onnx::TensorProto* w = b.model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_raw_data(std::string(12, '\0'));
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "initializer 'w': raw_data has 12 bytes, but f32[4] needs 16");
}

TEST(OnnxErrors, MissingInitializerNamesTheReader) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}});
  b.node("Conv", {"x", "conv1.weight"}, {"y"}, "conv1");
  b.output("y");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg,
                  "m.onnx: node 0 'conv1' (Conv): input 'conv1.weight' is not a graph "
                  "input, an initializer or the output of any node");
}

TEST(OnnxErrors, UndefinedGraphOutput) {
  ModelBuilder b = relu_model();
  b.output("nowhere");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "graph output 'nowhere' is not defined");
}

TEST(OnnxErrors, UnsupportedOpset) {
  ModelBuilder b(99);
  b.input("x", DataType::f32(), {int64_t{1}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "opset 99 is not supported");
}

TEST(OnnxErrors, UnsupportedElementType) {
  ModelBuilder b;
  onnx::ValueInfoProto* in = b.model.mutable_graph()->add_input();
  in->set_name("s");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  b.node("Identity", {"s"}, {"y"});
  b.output("y");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "graph input 's': element type STRING is not supported");
}

TEST(OnnxErrors, CycleIsNamed) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{2}});
  b.node("Add", {"x", "b"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"b"}, "second");
  b.output("b");
  std::string msg = user_error_of([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
  EXPECT_CONTAINS(msg, "the graph has a cycle");
}

TEST(OnnxErrors, DataDependentShapeIsNamed) {
  // Reshape to a shape that is an input of the model: kiln compiles for fixed shapes.
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{6}});
  b.input("shape", DataType::i64(), {int64_t{2}});
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  std::string msg = user_error_of([&] { run_graph_passes(g); });
  EXPECT_CONTAINS(msg, "node 0 'reshape' (Reshape): Reshape input 1 (shape) must be a constant");
  // Freezing the input to a value makes it compile.
  freeze_inputs(g, {{"shape", HostTensor::i64_vector({3, 4})}});
  run_graph_passes(g);
  EXPECT_EQ(g.type_of("y")->dims(), (std::vector<int64_t>{3, 4}));
}

TEST(OnnxErrors, UnboundSymbolicDimensionsAreAllListed) {
  ModelBuilder b;
  b.input("tokens", DataType::i64(), {std::string("batch"), std::string("seq")});
  b.input("image", DataType::f32(),
          {std::string("batch"), int64_t{3}, std::string(""), int64_t{8}});
  b.node("Identity", {"tokens"}, {"t"});
  b.node("Identity", {"image"}, {"i"});
  b.output("t");
  b.output("i");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  std::string msg = user_error_of([&] { run_graph_passes(g); });
  EXPECT_CONTAINS(msg, "m.onnx: 4 input dimensions are unbound");
  EXPECT_CONTAINS(msg, "input 'tokens' [batch,seq] dimension 0 ('batch')");
  EXPECT_CONTAINS(msg, "input 'tokens' [batch,seq] dimension 1 ('seq')");
  EXPECT_CONTAINS(msg, "input 'image' [batch,3,?,8] dimension 0 ('batch')");
  EXPECT_CONTAINS(msg, "input 'image' [batch,3,?,8] dimension 2 (unnamed)");
  // Binding the symbol once covers both inputs; the rest still needs binding.
  msg = user_error_of([&] { bind_input_shapes(g, {{"batch", {2}}, {"seq", {5}}}); });
  EXPECT_CONTAINS(msg, "1 input dimension is unbound");
  EXPECT_CONTAINS(msg, "input 'image' [2,3,?,8] dimension 2 (unnamed)");
  bind_input_shapes(g, {{"image", {2, 3, 4, 8}}});
  run_graph_passes(g);
  EXPECT_EQ(g.type_of("t")->dims(), (std::vector<int64_t>{2, 5}));
}

TEST(OnnxErrors, BadBindingsAreNamed) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {std::string("n"), int64_t{3}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g, {{"x", {1, 4}}});
                  }),
                  "input 'x' has a fixed size 3 in dimension 1, but the binding gives 4");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g, {{"x", {1, 3, 1}}});
                  }),
                  "input 'x' has rank 2 [n,3], but the binding gives 3 sizes [1,3,1]");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g, {{"images", {1, 3}}});
                  }),
                  "'images' names neither a graph input nor a symbolic dimension (inputs: x; "
                  "symbols: n)");
}

TEST(ShapeBinding, ParsesCommandLineForm) {
  auto [name, dims] = parse_shape_binding("input:0=1,3,224,224");
  EXPECT_EQ(name, "input:0");
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape_binding("scalar=").second, std::vector<int64_t>{});
  EXPECT_CONTAINS(user_error_of([] { parse_shape_binding("x=1,-3"); }),
                  "'-3' is not a size (a non-negative integer)");
  EXPECT_CONTAINS(user_error_of([] { parse_shape_binding("1,3,224"); }), "is not NAME=d0,d1,...");
  EXPECT_CONTAINS(user_error_of([] { parse_shape_binding("x=1,"); }), "ends with a comma");
}

// `x=N,3,48,W`: names in place of sizes declare those dimensions symbolic, whatever the file
// says; a symbol the file gave another name is renamed in every input that shares it.
TEST(ShapeBinding, NamesInPlaceOfSizesDeclareSymbols) {
  auto [name, spec] = parse_shape_binding("x=N,3,48,W");
  EXPECT_EQ(name, "x");
  EXPECT_EQ(spec, (std::vector<int64_t>{-1, 3, 48, -1}));
  EXPECT_EQ(spec.symbols, (std::vector<std::string>{"N", "", "", "W"}));
  EXPECT_EQ(spec.str(), "[N,3,48,W]");
  EXPECT_TRUE(parse_shape_binding("x=1,3").second.symbols.empty());
  EXPECT_CONTAINS(user_error_of([] { parse_shape_binding("x=1,3a"); }),
                  "'3a' is not a size (a non-negative integer) or a symbol");

  ModelBuilder m;
  m.input("x", DataType::f32(), {int64_t{1}, int64_t{3}});        // a fixed batch
  m.input("y", DataType::f32(), {std::string("b"), int64_t{3}});  // the file's own symbol
  m.input("z", DataType::f32(), {std::string("b"), int64_t{3}});
  m.node("Add", {"y", "z"}, {"s"});
  m.output("s");
  m.output("x");
  const std::string bytes = m.bytes();
  Graph g = import_onnx_bytes(bytes, "m.onnx");
  ShapeBindings b;
  add_shape_binding(b, "x=N,3");
  add_shape_binding(b, "y=N,3");  // renames b, in z too
  add_shape_binding(b, "N=4");
  bind_input_shapes(g, b);
  for (const char* in : {"x", "y", "z"})
    EXPECT_EQ(g.type_of(in)->dims(), (std::vector<int64_t>{4, 3})) << in;
  // Declared but never sized: the unbound dimension is named.
  Graph g2 = import_onnx_bytes(bytes, "m.onnx");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g2, {{"x", parse_shape_binding("x=N,3").second}, {"b", {2}}});
                  }),
                  "dimension 0 ('N')");
  // Symbols belong to inputs; the rank must match.
  Graph g3 = import_onnx_bytes(bytes, "m.onnx");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g3, {{"q", parse_shape_binding("q=N").second}});
                  }),
                  "'q' must be a graph input");
  EXPECT_CONTAINS(user_error_of([&] {
                    bind_input_shapes(g3, {{"x", parse_shape_binding("x=N").second}});
                  }),
                  "input 'x' has rank 2");
  ShapeBindings twice;
  add_shape_binding(twice, "x=N,3");
  EXPECT_CONTAINS(user_error_of([&] { add_shape_binding(twice, "x=M,3"); }),
                  "'x' is bound to [N,3] and to [M,3]");
}

TEST(ShapeBinding, ContradictionsAreOneError) {
  ShapeBindings b;
  add_shape_binding(b, "input=1,3,8,8");
  add_shape_binding(b, "input=1,3,8,8");  // the same twice says nothing new
  EXPECT_CONTAINS(user_error_of([&] { add_shape_binding(b, "input=2,3,8,8"); }),
                  "contradicting input shapes: 'input' is bound to [1,3,8,8] and to [2,3,8,8]");
  add_shape_binding(b, "batch=1");
  EXPECT_CONTAINS(user_error_of([&] { add_shape_binding(b, "batch=2"); }), "'batch' is bound to");

  // An input's binding fixes the symbols of its dimensions: batch=2 beside x=1,3 contradicts.
  ModelBuilder m;
  m.input("x", DataType::f32(), {std::string("batch"), int64_t{3}});
  m.input("y", DataType::f32(), {std::string("batch"), int64_t{3}});
  m.node("Add", {"x", "y"}, {"z"});
  m.output("z");
  Graph g = import_onnx_bytes(m.bytes(), "m.onnx");
  EXPECT_CONTAINS(user_error_of([&] { bind_input_shapes(g, {{"x", {1, 3}}, {"batch", {2}}}); }),
                  "symbolic dimension 'batch' is 2 by --input-shape batch=2 but 1 by input 'x'");
  Graph g2 = import_onnx_bytes(m.bytes(), "m.onnx");
  EXPECT_CONTAINS(user_error_of([&] { bind_input_shapes(g2, {{"x", {1, 3}}, {"y", {2, 3}}}); }),
                  "symbolic dimension 'batch' is 1 by input 'x' dimension 0 but 2 by input 'y'");
  Graph g3 = import_onnx_bytes(m.bytes(), "m.onnx");
  bind_input_shapes(g3, {{"x", {2, 3}}, {"batch", {2}}});  // agreeing bindings are fine
}

}  // namespace
}  // namespace kiln::graph
