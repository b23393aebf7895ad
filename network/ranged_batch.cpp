#include "network/ranged_batch.h"

#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/graph/batch_separable.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "kiln/params.h"

namespace kiln::network {

namespace {

// The symbol's places in the inputs' declared shapes; a UserError when it is anywhere but
// axis 0, where the runtime cannot slice the samples apart.
void check_symbol_is_a_batch(const graph::Graph& g, const graph::DimRange& range) {
  bool found = false;
  for (const std::string& in : g.inputs) {
    const graph::ValueType& t = g.types.at(in);
    if (!t.shape) continue;
    for (size_t axis = 0; axis < t.shape->size(); ++axis) {
      if ((*t.shape)[axis].known() || (*t.shape)[axis].symbol != range.symbol) continue;
      user_check(axis == 0)
          << "--range " << range.symbol << ": '" << range.symbol << "' is axis " << axis
          << " of input '" << in << "' " << graph::shape_str(*t.shape)
          << "; kiln compiles a range only for a batch, axis 0 of the inputs (other ranged "
             "dimensions are not supported yet)";
      found = true;
    }
  }
  user_check(found) << "--range " << range.symbol << ": no input of " << g.source
                    << " has a dimension named '" << range.symbol
                    << "'; a fixed batch is named by the input's shape, e.g. --input-shape "
                    << (g.inputs.empty() ? "x" : g.inputs[0]) << "=" << range.symbol << ",...";
}

graph::Graph bound_at(const std::string& model_path, graph::ShapeBindings bindings,
                      const std::string& symbol, int64_t batch) {
  graph::Graph g = graph::import_onnx_file(model_path);
  bindings[symbol] = {batch};
  graph::bind_input_shapes(g, bindings);
  graph::run_graph_passes(g);
  return g;
}

}  // namespace

BatchRange plan_batch_range(const std::string& model_path, const graph::ShapeBindings& bindings,
                            const graph::DimRange& range) {
  user_check(range.max <= (int64_t{1} << 30))
      << "--range " << range.symbol << ": at most 2^30 samples";
  user_check(bindings.count(range.symbol) == 0)
      << "--range " << range.symbol << " and --input-shape " << range.symbol
      << " both give it a size: keep one";
  graph::Graph declared = graph::import_onnx_file(model_path);
  graph::declare_input_symbols(declared, bindings);  // --input-shape x=N,3,224,224
  check_symbol_is_a_batch(declared, range);
  // Two batches, neither 1 (no pass may treat them as a broadcast), compared node by node.
  const graph::Graph at2 = bound_at(model_path, bindings, range.symbol, 2);
  const graph::Graph at3 = bound_at(model_path, bindings, range.symbol, 3);
  BatchRange r{range.symbol, {range.min, range.max, {}, false}};
  r.batch.batched_inputs = graph::check_batch_separable(at2, at3, range.symbol);
  return r;
}

std::vector<int64_t> batch_classes(const BatchRange& range, const NetworkProgram& one_sample,
                                   const std::optional<std::vector<int64_t>>& requested) {
  if (requested) {
    for (size_t i = 0; i < requested->size(); ++i) {
      const int64_t c = (*requested)[i];
      user_check(c > (i ? (*requested)[i - 1] : 1) && c <= range.batch.max)
          << "--batch-classes: each class must be larger than 1 and the one before, and at most "
             "the range's "
          << range.batch.max << "; got " << c;
    }
    user_check(requested->size() < 8) << "--batch-classes: at most 7 classes";
    return *requested;
  }
  double flops = 0;
  for (const Step& s : one_sample.steps) flops += one_sample.tasks[s.task].flops;
  std::vector<int64_t> classes;
  if (weight_reuse(one_sample) >= kMinFlopsPerParamByte && flops >= kSmallSampleFlops)
    return classes;
  for (int64_t c : {2, 4, 8, 16})
    if (c <= range.batch.max) classes.push_back(c);
  return classes;
}

std::optional<std::vector<int64_t>> parse_batch_classes(const std::string& spec) {
  if (spec == "auto") return std::nullopt;
  std::vector<int64_t> sizes;
  if (spec == "none") return sizes;
  std::stringstream items(spec);
  for (std::string item; std::getline(items, item, ',');) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    user_check(ec == std::errc() && end == item.data() + item.size() && !item.empty())
        << "--batch-classes " << spec << ": '" << item
        << "' is not a batch size (give auto, none, or sizes such as 4,16)";
    sizes.push_back(v);
  }
  return sizes;
}

double weight_reuse(const NetworkProgram& p) {
  // The weights of the kernels that multiply by them (convolutions, dense layers), each counted
  // once; an embedding table that a Gather reads a few rows of is not streamed.
  double flops = 0, weights = 0;
  std::set<int> counted;
  for (const Step& s : p.steps) {
    const Task& t = p.tasks[s.task];
    flops += t.flops;
    const std::string& op = t.workload.op;
    if (op != "dense" && op != "conv2d" && op != "conv2d_transpose") continue;
    for (int b : s.args)
      if (p.buffers[b].kind == BufferKind::Params && counted.insert(b).second)
        weights += static_cast<double>(p.buffers[b].bytes);
  }
  return weights > 0 ? flops / weights : 1e30;
}

namespace {

// The params tensors of `main`, found by their bytes: a class's packed weights are usually the
// one-sample program's (the channel blocks rarely depend on the batch).
class ParamsIndex {
 public:
  explicit ParamsIndex(NetworkProgram& main) : main_(main) {
    for (const Buffer& b : main.buffers)
      if (b.kind == BufferKind::Params) by_digest_.emplace(digest(main.params, b), b.offset);
  }

  // The offset in main's payload of `b`'s bytes from `params`, appended when new.
  uint64_t place(const std::vector<uint8_t>& params, const Buffer& b) {
    const uint64_t d = digest(params, b);
    for (auto [it, end] = by_digest_.equal_range(d); it != end; ++it)
      if (it->second + b.bytes <= main_.params.size() &&
          std::memcmp(main_.params.data() + it->second, params.data() + b.offset, b.bytes) == 0)
        return it->second;
    main_.params.resize((main_.params.size() + 63) / 64 * 64);  // 64-byte aligned tensors
    const uint64_t offset = main_.params.size();
    main_.params.insert(main_.params.end(), params.begin() + static_cast<ptrdiff_t>(b.offset),
                        params.begin() + static_cast<ptrdiff_t>(b.offset + b.bytes));
    by_digest_.emplace(d, offset);
    return offset;
  }

 private:
  static uint64_t digest(const std::vector<uint8_t>& params, const Buffer& b) {
    return kiln::params_checksum(params.data() + b.offset, b.bytes) ^ b.bytes;
  }
  NetworkProgram& main_;
  std::multimap<uint64_t, uint64_t> by_digest_;  // digest -> offset in main's payload
};

// A kernel is the same kernel when template, workload and config all are.
std::string task_key(const Task& t) {
  return t.tpl->name() + "|" + t.workload.str() + "|" + t.config.to_json();
}

}  // namespace

void add_batch_class(NetworkProgram& main, NetworkProgram program, int64_t batch) {
  std::map<std::string, int> tasks;
  for (size_t t = 0; t < main.tasks.size(); ++t) tasks.emplace(task_key(main.tasks[t]), t);
  std::vector<int> task_of(program.tasks.size());
  for (size_t t = 0; t < program.tasks.size(); ++t) {
    Task task = program.tasks[t];
    auto [it, fresh] = tasks.emplace(task_key(task), static_cast<int>(main.tasks.size()));
    if (fresh) {
      task.kernel = "b" + std::to_string(batch) + "_" + task.kernel;  // unique in the module
      main.tasks.push_back(std::move(task));
    } else {
      main.tasks[it->second].calls += task.calls;
    }
    task_of[t] = it->second;
  }
  ParamsIndex params(main);
  const int first_buffer = static_cast<int>(main.buffers.size());
  for (Buffer b : program.buffers) {
    if (b.kind == BufferKind::Params) b.offset = params.place(program.params, b);
    main.buffers.push_back(std::move(b));
  }
  NetworkProgram::BatchClass added{batch, {}};
  for (Step s : program.steps) {
    s.task = task_of[s.task];
    for (int& arg : s.args) arg += first_buffer;
    added.steps.push_back(std::move(s));
  }
  main.batch_classes.push_back(std::move(added));
  main.workspace_bytes = std::max(main.workspace_bytes, program.workspace_bytes);
  main.naive_workspace_bytes = std::max(main.naive_workspace_bytes, program.naive_workspace_bytes);
}

}  // namespace kiln::network
