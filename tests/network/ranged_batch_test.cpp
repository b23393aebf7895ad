// A ranged batch (`kiln compile --range N=1..16`): one artifact runs every batch in the range,
// each output equal to the reference evaluator's on the graph bound to that batch; a network
// that mixes samples is refused at compile time naming the node; a batch out of range, a wrong
// rank or two inputs of different batches are refused by the runtime (C++ and C API) before
// anything runs. The CNN also runs on arm-neon under qemu at a batch other than the smallest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "compiler/base/error.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "network/extract_tasks.h"
#include "kiln/compare.h"
#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/runtime_c.h"
#include "network/compile_network.h"
#include "network/ranged_batch.h"
#include "runtime/process/kernel_exec.h"
#include "tests/graph/model_builder.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;
using testing::HasSubstr;

// Conv, BN, Relu, MaxPool, a residual Add, GlobalAveragePool, Flatten, Gemm: the CNN of a
// classifier, batch N.
std::string cnn() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {"N", 3, 12, 12});
  b.initializer("w1", random_tensor({8, 3, 3, 3}, 1, 0.5f));
  b.initializer("b1", random_tensor({8}, 2));
  b.initializer("w2", random_tensor({8, 8, 3, 3}, 3, 0.3f));
  b.initializer("scale", random_tensor({8}, 4));
  b.initializer("bias", random_tensor({8}, 5));
  b.initializer("mean", random_tensor({8}, 6, 0.1f));
  b.initializer("var", graph::test::f32_tensor({8}, {1, 2, 0.5, 1, 1.5, 1, 2, 1}));
  b.initializer("fc", random_tensor({10, 8}, 7));
  b.initializer("fcb", random_tensor({10}, 8));
  attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  auto& pool = b.node("MaxPool", {"r1"}, {"p1"});
  attr_ints(pool, "kernel_shape", {2, 2});
  attr_ints(pool, "strides", {2, 2});
  attr_ints(b.node("Conv", {"p1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"c2", "scale", "bias", "mean", "var"}, {"n2"});
  b.node("Add", {"n2", "p1"}, {"s2"});
  b.node("Relu", {"s2"}, {"r2"});
  b.node("GlobalAveragePool", {"r2"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  attr_int(b.node("Gemm", {"f", "fc", "fcb"}, {"y"}), "transB", 1);
  b.output("y");
  return b.bytes();
}

// One self-attention block over [N, 6, 16] with 2 heads: projections, heads split by a Reshape
// that keeps the batch (0), QK^T, Softmax, the weighted sum, heads merged, a LayerNorm.
std::string encoder() {
  ModelBuilder b(17);
  b.input("h", DataType::f32(), {"batch", 6, 16});
  for (const char* w : {"wq", "wk", "wv"}) b.initializer(w, random_tensor({16, 16}, w[1], 0.3f));
  b.initializer("heads", HostTensor::i64_vector({0, 6, 2, 8}));
  b.initializer("merged", HostTensor::i64_vector({0, 6, 16}));
  b.initializer("gamma", random_tensor({16}, 11));
  b.initializer("beta", random_tensor({16}, 12));
  for (const char* p : {"q", "k", "v"}) {
    const std::string s(p);
    b.node("MatMul", {"h", "w" + s}, {s + "p"});
    b.node("Reshape", {s + "p", "heads"}, {s + "r"});
    attr_ints(b.node("Transpose", {s + "r"}, {s + "t"}), "perm",
              s == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  b.node("MatMul", {"qt", "kt"}, {"scores"});
  attr_int(b.node("Softmax", {"scores"}, {"probs"}), "axis", -1);
  b.node("MatMul", {"probs", "vt"}, {"ctx"});
  attr_ints(b.node("Transpose", {"ctx"}, {"ctxt"}), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ctxt", "merged"}, {"ctxm"});
  b.node("Add", {"ctxm", "h"}, {"res"});
  attr_int(b.node("LayerNormalization", {"res", "gamma", "beta"}, {"y"}), "axis", -1);
  b.output("y");
  return b.bytes();
}

// Token ids [N, 5] looked up in a table, plus `bias` [1, 8], an input without the batch that
// every sample shares, averaged over the tokens.
std::string lookup_with_shared_input() {
  ModelBuilder b(13);
  b.input("ids", DataType::i64(), {"N", 5});
  b.input("bias", DataType::f32(), {1, 8});
  b.initializer("table", random_tensor({20, 8}, 3));
  b.node("Gather", {"table", "ids"}, {"emb"});
  attr_ints(b.node("ReduceMean", {"emb"}, {"m"}), "axes", {1});
  b.node("Add", {"m", "bias"}, {"y"});
  b.output("y");
  return b.bytes();
}

struct Ranged {
  TempDir dir;
  CompileReport report;
  std::string out() const { return dir.path() + "/out"; }
};

// An MLP: three dense layers over [N, 64], each weight used once per sample (a GEMV). With
// `static_batch` its input is [1, 64], as many exporters write a batch.
std::string mlp(bool static_batch = false) {
  ModelBuilder b(13);
  if (static_batch)
    b.input("x", DataType::f32(), {1, 64});
  else
    b.input("x", DataType::f32(), {"N", 64});
  std::string h = "x";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = "w" + std::to_string(layer), y = "h" + std::to_string(layer);
    b.initializer(w, random_tensor({64, 64}, 20 + layer, 0.2f));
    b.node("MatMul", {h, w}, {y + "m"});
    b.node("Relu", {y + "m"}, {y});
    h = y;
  }
  b.output(h);
  return b.bytes();
}

std::unique_ptr<Ranged> compile_ranged(
    const std::string& bytes, const std::string& range, const std::string& target = "host",
    const std::optional<std::vector<int64_t>>& classes = std::nullopt,
    const graph::ShapeBindings& shapes = {}) {
  auto r = std::make_unique<Ranged>();
  const std::string onnx = r->dir.path() + "/net.onnx";
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileOptions o{onnx, target_from_name(target), {}, shapes, r->out()};
  o.batch_range = graph::parse_dim_range(range);
  o.batch_classes = classes;
  r->report = compile_network(o);
  return r;
}

// The graph's inputs at `batch` (random, or ids in [0, 20)) and the reference outputs.
struct Reference {
  std::vector<std::string> order;
  std::map<std::string, HostTensor> inputs, want;
};

Reference reference_at(const std::string& bytes, const std::string& symbol, int64_t batch) {
  graph::Graph g = graph::import_onnx_bytes(bytes, "net.onnx");
  graph::bind_input_shapes(g, {{symbol, {batch}}});
  Reference r;
  uint32_t seed = static_cast<uint32_t>(100 + batch);
  for (const std::string& in : g.inputs) {
    r.order.push_back(in);
    const std::vector<int64_t> dims = g.type_of(in)->dims();
    if (g.type_of(in)->dtype == DataType::i64()) {
      HostTensor ids = HostTensor(DataType::i64(), dims);
      for (int64_t k = 0; k < ids.numel(); ++k) ids.data<int64_t>()[k] = (k * 7 + batch) % 20;
      r.inputs[in] = ids;
    } else {
      r.inputs[in] = random_tensor(dims, seed++);
    }
  }
  r.want = graph::evaluate(g, r.inputs);
  return r;
}

void expect_close(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  const std::vector<double> g = got.to_f64(), w = want.to_f64();
  const Closeness c = judge_closeness(
      g.size(), [&](size_t k) { return g[k]; }, [&](size_t k) { return w[k]; }, 1e-4);
  EXPECT_TRUE(c.close) << what << ": " << c.mismatches << " mismatches, first at " << c.first
                       << " (got " << g[c.first] << ", want " << w[c.first] << ")";
}

// Runs the ranged artifact at each batch through run_shaped and compares every output.
void expect_every_batch_matches(const std::string& bytes, const std::string& symbol,
                                const std::string& out, const std::vector<int64_t>& batches,
                                int threads) {
  const Model m = Model::load(out + "/model.so", out + "/model.params", threads);
  for (int64_t batch : batches) {
    const Reference ref = reference_at(bytes, symbol, batch);
    std::vector<std::vector<int64_t>> shapes;
    std::vector<Model::Tensor> in;
    for (const std::string& name : ref.order) shapes.push_back(ref.inputs.at(name).shape());
    for (size_t i = 0; i < ref.order.size(); ++i)
      in.push_back({ref.inputs.at(ref.order[i]).raw(), shapes[i]});
    std::vector<HostTensor> got;
    std::vector<void*> outs;
    for (const TensorInfo& t : m.outputs()) {
      const HostTensor& want = ref.want.at(t.name);
      got.push_back(HostTensor(want.dtype(), want.shape()));
    }
    for (HostTensor& g : got) outs.push_back(g.raw());
    EXPECT_EQ(m.run_shaped(in, outs), batch);
    for (size_t i = 0; i < got.size(); ++i)
      expect_close(got[i], ref.want.at(m.outputs()[i].name),
                   m.outputs()[i].name + " at batch " + std::to_string(batch));
  }
}

TEST(RangedBatch, OneCnnArtifactRunsEveryBatchOfItsRangeExactly) {
  // One program, run sample by sample (--batch-classes none).
  const std::unique_ptr<Ranged> r = compile_ranged(cnn(), "N=1..16", "host", {{}});
  EXPECT_THAT(format_report(r->report), HasSubstr("batch N = 1..16: built for one sample"));
  EXPECT_TRUE(r->report.program.batch_classes.empty());
  // Ends, the middle, primes; on one thread and on two.
  expect_every_batch_matches(cnn(), "N", r->out(), {1, 16, 8, 2, 3, 7, 13}, 1);
  expect_every_batch_matches(cnn(), "N", r->out(), {1, 5, 11, 16}, 2);
}

TEST(RangedBatch, BatchClassesRunTheLargestThatFitInTurn) {
  // Classes asked for: 13 runs as 4 + 4 + 4 + 1, 16 as one run of the 16-sample program.
  const std::unique_ptr<Ranged> r = compile_ranged(cnn(), "N=1..16", "host", {{4, 16}});
  EXPECT_THAT(format_report(r->report), HasSubstr("built for batches of 1, 4, 16"));
  expect_every_batch_matches(cnn(), "N", r->out(), {16, 13, 4, 5, 3, 1}, 2);
  EXPECT_THROW(compile_ranged(cnn(), "N=1..8", "host", {{4, 16}}), UserError);  // 16 > 8
  EXPECT_THROW(compile_ranged(cnn(), "N=1..8", "host", {{4, 4}}), UserError);
}

TEST(RangedBatch, AnMlpStreamingItsWeightsGetsBatchClassesSharingItsParams) {
  const std::unique_ptr<Ranged> r = compile_ranged(mlp(), "N=1..32");
  ASSERT_EQ(r->report.program.batch_classes.size(), 4u) << format_report(r->report);
  EXPECT_EQ(r->report.program.batch_classes[0].batch, 2);
  EXPECT_EQ(r->report.program.batch_classes[3].batch, 16);
  // It pads: 3 runs as one run of 4, 21 as 16 and a padded 8, 7 as a padded 8.
  EXPECT_TRUE(r->report.program.batch.pad);
  EXPECT_THAT(format_report(r->report), HasSubstr("the last run padded"));
  expect_every_batch_matches(mlp(), "N", r->out(), {1, 32, 21, 16, 4, 7, 3, 6}, 1);
  expect_every_batch_matches(mlp(), "N", r->out(), {5, 11, 2}, 2);
  // One sample runs GEMVs on the weights as stored, the batches share one packing for their
  // GEMMs: two copies of the weights, not five.
  const std::unique_ptr<Ranged> one = compile_ranged(mlp(), "N=1..32", "host", {{}});
  EXPECT_TRUE(one->report.program.batch_classes.empty());
  EXPECT_LE(std::filesystem::file_size(r->out() + "/model.params"),
            2 * std::filesystem::file_size(one->out() + "/model.params"));
}

// A file whose batch is fixed at 1 gets a ranged batch by naming it: `--input-shape x=N,64
// --range N=1..8` declares axis 0 symbolic. The proof then checks the graph as for any other.
TEST(RangedBatch, AFixedBatchNamedInTheInputShapeIsRanged) {
  graph::ShapeBindings shapes;
  graph::add_shape_binding(shapes, "x=N,64");
  const std::unique_ptr<Ranged> r = compile_ranged(mlp(true), "N=1..8", "host", {{}}, shapes);
  EXPECT_THAT(format_report(r->report), HasSubstr("batch N = 1..8"));
  // The same network with a symbolic batch gives the reference at each batch.
  expect_every_batch_matches(mlp(), "N", r->out(), {1, 8, 3, 5}, 1);
  // Without the declaration the fixed batch is refused by name.
  try {
    compile_ranged(mlp(true), "N=1..8");
    ADD_FAILURE() << "a range over a fixed dimension compiled";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no input of")) << e.what();
  }
}

// `kiln tune --range` measures what `kiln compile --range` builds: one sample's kernels and
// each batch class's, every workload of the compile among the tasks and nothing else.
TEST(RangedBatch, TheTasksOfATuneAreTheKernelsOfEveryClass) {
  const std::unique_ptr<Ranged> r = compile_ranged(mlp(), "N=1..32");
  const std::string onnx = r->dir.path() + "/net.onnx";
  std::vector<int64_t> classes;
  const std::vector<ExtractedTask> tasks =
      extract_ranged_batch_tasks(onnx, target_from_name("host"), {},
                                 graph::parse_dim_range("N=1..32"), {}, std::nullopt, &classes);
  EXPECT_EQ(classes, (std::vector<int64_t>{2, 4, 8, 16}));
  std::set<std::string> tuned, compiled;
  for (const ExtractedTask& t : tasks) tuned.insert(t.workload.str());
  for (const Task& t : r->report.program.tasks)
    if (t.tpl->space(t.workload, target_from_name("host")).size() > 1)
      compiled.insert(t.workload.str());
  EXPECT_EQ(tuned, compiled);
  bool has_m16 = false;
  for (const std::string& w : tuned) has_m16 |= w.find("M=16 ") != std::string::npos;
  EXPECT_TRUE(has_m16) << "the class of 16's kernels are tuned too";
  // Classes as --batch-classes gives them.
  extract_ranged_batch_tasks(onnx, target_from_name("host"), {}, graph::parse_dim_range("N=1..32"),
                             {}, parse_batch_classes("none"), &classes);
  EXPECT_TRUE(classes.empty());
  EXPECT_EQ(parse_batch_classes("4,16"), (std::vector<int64_t>{4, 16}));
  EXPECT_FALSE(parse_batch_classes("auto"));
  EXPECT_THROW(parse_batch_classes("4,x"), UserError);
}

TEST(RangedBatch, ANetworkComputingOnItsWeightsStaysOneProgram) {
  // 64 channels at 56 x 56: 0.23 GFLOP a sample, each weight used 3,136 times.
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {"N", 64, 56, 56});
  b.initializer("w", random_tensor({64, 64, 3, 3}, 9, 0.1f));
  attr_ints(b.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  b.output("y");
  const std::unique_ptr<Ranged> r = compile_ranged(b.bytes(), "N=1..16");
  EXPECT_TRUE(r->report.program.batch_classes.empty()) << format_report(r->report);
  // A small one gets its classes, and does not pad: it computes on its weights.
  const std::unique_ptr<Ranged> small = compile_ranged(cnn(), "N=1..8");
  EXPECT_EQ(small->report.program.batch_classes.size(), 3u);
  EXPECT_FALSE(small->report.program.batch.pad);
}

TEST(RangedBatch, AttentionBlockRunsEveryBatch) {
  const std::unique_ptr<Ranged> r = compile_ranged(encoder(), "batch=2..9");
  expect_every_batch_matches(encoder(), "batch", r->out(), {2, 9, 3, 5, 7}, 2);
}

TEST(RangedBatch, AnInputWithoutTheBatchIsSharedByEverySample) {
  const std::unique_ptr<Ranged> r = compile_ranged(lookup_with_shared_input(), "N=1..32");
  expect_every_batch_matches(lookup_with_shared_input(), "N", r->out(), {1, 4, 31, 32}, 1);
  const Model m = Model::load(r->out() + "/model.so", r->out() + "/model.params", 1);
  EXPECT_EQ(m.min_batch(), 1);
  EXPECT_EQ(m.max_batch(), 32);
  EXPECT_TRUE(m.inputs()[0].batched);
  EXPECT_FALSE(m.inputs()[1].batched);
  EXPECT_TRUE(m.outputs()[0].batched);
}

TEST(RangedBatch, TheInfoDescribesTheSmallestBatchAndRunRunsIt) {
  const std::unique_ptr<Ranged> r = compile_ranged(cnn(), "N=3..6");
  const Model m = Model::load(r->out() + "/model.so", r->out() + "/model.params", 1);
  EXPECT_EQ(m.inputs()[0].shape, (std::vector<int64_t>{3, 3, 12, 12}));
  EXPECT_EQ(m.inputs()[0].bytes, 3u * 3 * 12 * 12 * 4);
  EXPECT_EQ(m.outputs()[0].shape, (std::vector<int64_t>{3, 10}));
  // run() takes buffers of the sizes above: three samples.
  const Reference ref = reference_at(cnn(), "N", 3);
  HostTensor got = HostTensor(DataType::f32(), {3, 10});
  m.run({ref.inputs.at("x").raw()}, {got.raw()});
  expect_close(got, ref.want.at("y"), "run() at the smallest batch");
}

// The runtime's refusal of `shape` for the CNN ranged 2..8: its message, and the C API's code.
std::string refusal(const Model& m, const std::string& out, std::vector<int64_t> shape) {
  std::vector<float> x(1 << 16), y(1 << 10);
  const Model::Tensor in{x.data(), shape};
  void* outs[] = {y.data()};
  std::string message;
  try {
    m.run_shaped({&in, 1}, outs);
    ADD_FAILURE() << "a batch of shape " << shape.size() << "-d ran";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    message = e.what();
  }
  kiln_model* cm = nullptr;
  EXPECT_EQ(kiln_model_load((out + "/model.so").c_str(), (out + "/model.params").c_str(), 1, &cm),
            KILN_OK);
  const kiln_tensor ct{x.data(), static_cast<int32_t>(shape.size()), shape.data()};
  EXPECT_EQ(kiln_model_run_shaped(cm, &ct, 1, outs), KILN_ERROR_INVALID_INPUT);
  EXPECT_EQ(message, kiln_last_error());
  kiln_model_free(cm);
  return message;
}

TEST(RangedBatch, ABatchOutsideTheRangeOrAnotherShapeIsRefusedNamingTheDimension) {
  const std::unique_ptr<Ranged> r = compile_ranged(cnn(), "N=2..8");
  const Model m = Model::load(r->out() + "/model.so", r->out() + "/model.params", 1);
  EXPECT_THAT(refusal(m, r->out(), {9, 3, 12, 12}),
              HasSubstr("input 0 ('x') holds a batch of 9 along axis 0, the model takes 2 to 8"));
  EXPECT_THAT(refusal(m, r->out(), {1, 3, 12, 12}), HasSubstr("batch of 1"));
  EXPECT_THAT(refusal(m, r->out(), {0, 3, 12, 12}), HasSubstr("batch of 0"));
  EXPECT_THAT(refusal(m, r->out(), {4, 3, 12}),
              HasSubstr("has shape (4, 3, 12), the model takes (batch, 3, 12, 12)"));
  EXPECT_THAT(refusal(m, r->out(), {4, 3, 12, 13}),
              HasSubstr("the model takes (batch, 3, 12, 12)"));
  EXPECT_THAT(refusal(m, r->out(), {}), HasSubstr("has shape ()"));
  kiln_model* cm = nullptr;
  ASSERT_EQ(kiln_model_load((r->out() + "/model.so").c_str(), (r->out() + "/model.params").c_str(),
                            1, &cm),
            KILN_OK);
  int64_t low = 0, high = 0;
  EXPECT_EQ(kiln_model_batch_range(cm, &low, &high), KILN_OK);
  EXPECT_EQ(low, 2);
  EXPECT_EQ(high, 8);
  kiln_tensor_info info{};
  ASSERT_EQ(kiln_model_input_info(cm, 0, &info), KILN_OK);
  EXPECT_EQ(info.batched, 1);
  EXPECT_EQ(info.shape[0], 2);
  kiln_model_free(cm);
}

TEST(RangedBatch, TwoInputsOfDifferentBatchesAreRefused) {
  ModelBuilder b(13);
  b.input("a", DataType::f32(), {"N", 4});
  b.input("b", DataType::f32(), {"N", 4});
  b.node("Add", {"a", "b"}, {"y"});
  b.output("y");
  const std::unique_ptr<Ranged> r = compile_ranged(b.bytes(), "N=1..8");
  const Model m = Model::load(r->out() + "/model.so", r->out() + "/model.params", 1);
  std::vector<float> a(32), c(32), y(32);
  const std::vector<int64_t> three{3, 4}, five{5, 4};
  const Model::Tensor in[] = {{a.data(), three}, {c.data(), five}};
  void* outs[] = {y.data()};
  try {
    m.run_shaped(in, outs);
    ADD_FAILURE() << "batches 3 and 5 ran";
  } catch (const RuntimeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 1 ('b') holds a batch of 5, input 0 one of 3"));
  }
}

std::string compile_error(const std::string& bytes, const std::string& range) {
  try {
    compile_ranged(bytes, range);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "compiled with --range " << range;
  return "";
}

TEST(RangedBatch, ANetworkThatMixesSamplesIsRefusedNamingTheNode) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {"N", 4});
  attr_ints(b.node("ReduceSum", {"x"}, {"s"}, "over_batch"), "axes", {0});
  b.node("Sub", {"x", "s"}, {"y"});
  b.output("y");
  const std::string message = compile_error(b.bytes(), "N=1..8");
  EXPECT_THAT(message, HasSubstr("over_batch"));
  EXPECT_THAT(message, HasSubstr("ReduceSum"));
}

TEST(RangedBatch, ARangeOnlyNamesABatchAxis) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 3, 8, "W"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THAT(compile_error(b.bytes(), "W=8..64"), HasSubstr("'W' is axis 3 of input 'x'"));
  EXPECT_THAT(compile_error(b.bytes(), "batch=1..4"), HasSubstr("no input of"));
  EXPECT_THROW(graph::parse_dim_range("N=0..4"), UserError);
  EXPECT_THROW(graph::parse_dim_range("N=5..4"), UserError);
  EXPECT_THROW(graph::parse_dim_range("N=1-4"), UserError);
}

// A float32 .npy of `t`, for model_app under qemu.
void write_npy(const std::string& path, const HostTensor& t) {
  std::string dims;
  for (int64_t d : t.shape()) dims += std::to_string(d) + ",";
  if (t.shape().size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ').push_back('\n');
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {static_cast<char>(header.size() & 0xff),
                          static_cast<char>(header.size() >> 8)};
  f.write(length, 2);
  f << header;
  f.write(reinterpret_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
}

TEST(RangedBatch, ArmNeonUnderQemuRunsABatchOfFive) {
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || !std::filesystem::exists(KILN_MODEL_APP_AARCH64))
    GTEST_SKIP() << "qemu-aarch64 or the cross-built model_app is missing";
  const std::unique_ptr<Ranged> r = compile_ranged(cnn(), "N=1..8", "arm-neon");
  const Reference ref = reference_at(cnn(), "N", 5);
  const std::string x = r->dir.path() + "/x.npy", saved = r->dir.path() + "/y.bin";
  write_npy(x, ref.inputs.at("x"));
  std::string cmd;
  for (const std::string& a : qemu) cmd += a + " ";
  cmd += std::string(KILN_MODEL_APP_AARCH64) + " " + r->out() + " " + x + " --repeat 1 --save " +
         saved + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  HostTensor got = HostTensor(DataType::f32(), {5, 10});
  std::ifstream f(saved, std::ios::binary);
  f.read(reinterpret_cast<char*>(got.raw()), static_cast<std::streamsize>(got.nbytes()));
  ASSERT_TRUE(f.good()) << "model_app wrote fewer than 5 samples";
  expect_close(got, ref.want.at("y"), "arm-neon at batch 5");
}

}  // namespace
}  // namespace kiln::network::test
