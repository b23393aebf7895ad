#include "compiler/network/lower_network.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "compiler/network/choose_template.h"
#include "compiler/network/op_table.h"
#include "kiln/params.h"
#include "schedules/cast.h"
#include "schedules/layout.h"
#include "tuner/host_values.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;
using schedules::KernelArg;
using schedules::Values;
using schedules::Workload;
using ir::DataType;

namespace {

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

bool is_half(DataType t) {
  return t == DataType::bf16() || t == DataType::f16();
}

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

class Lowerer {
 public:
  Lowerer(Graph& g, const Target& t, const tuner::HistoryBest& h) : g_(g), target_(t), history_(h) {}

  NetworkProgram run() {
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const std::string& v = g_.inputs[i];
      std::vector<int64_t> d = dims(v);
      user_check(dtype_of(v) == DataType::f32())
          << g_.source << ": graph input '" << v << "' is " << dtype_of(v).str()
          << "; model inputs must be f32";
      p_.input_names.push_back(v);
      p_.input_shapes.push_back(d);
      available_[v][0] = add_buffer({BufferKind::Input, static_cast<int>(i),
                                     static_cast<uint64_t>(numel(d)) * 4, 0, v, 0});
    }
    for (const std::string& v : g_.outputs) {
      user_check(!g_.is_constant(v) &&
                 std::find(g_.inputs.begin(), g_.inputs.end(), v) == g_.inputs.end())
          << g_.source << ": graph output '" << v
          << "' is a graph input or a constant; kiln compiles only computed outputs";
      user_check(std::count(g_.outputs.begin(), g_.outputs.end(), v) == 1)
          << g_.source << ": graph output '" << v << "' is listed twice";
      user_check(dtype_of(v) == DataType::f32())
          << g_.source << ": graph output '" << v << "' is " << dtype_of(v).str()
          << "; model outputs must be f32";
      p_.output_names.push_back(v);
      p_.output_shapes.push_back(dims(v));
    }
    for (const Node& n : g_.nodes) lower_node(n);
    for (const std::string& v : g_.outputs)
      internal_check(available_[v].count(0)) << "graph output '" << v << "' was never written";
    p_.params = params_.payload();
    return std::move(p_);
  }

 private:
  std::vector<int64_t> dims(const std::string& v) const {
    std::optional<graph::ValueType> t = g_.type_of(v);
    user_check(t && t->is_concrete()) << g_.source << ": value '" << v << "' has no concrete shape";
    user_check(t->dtype == DataType::f32() || is_half(t->dtype))
        << g_.source << ": value '" << v << "' is " << t->dtype.str()
        << "; only f32 networks are supported (f16 and bf16 inside, from --dtype)";
    return t->dims();
  }

  DataType dtype_of(const std::string& v) const { return g_.type_of(v)->dtype; }

  int add_buffer(Buffer b) {
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  // A fresh buffer for `value` in `layout`: the model's output when it is a graph output in
  // its logical layout, else workspace.
  int new_buffer(const std::string& value, Layout layout) {
    std::vector<int64_t> d = dims(value);
    auto out = std::find(g_.outputs.begin(), g_.outputs.end(), value);
    const uint64_t bytes =
        static_cast<uint64_t>(layout_elements(d, layout)) * dtype_of(value).bytes();
    int id = out != g_.outputs.end() && layout == 0
                 ? add_buffer({BufferKind::Output, static_cast<int>(out - g_.outputs.begin()),
                               bytes, 0, value, 0})
                 : add_buffer({BufferKind::Workspace, 0, bytes, 0, value, layout});
    available_[value][layout] = id;
    return id;
  }

  // Constants are converted to the kernel argument's type here, at compile time.
  int param_buffer(const std::string& value, const Values& data, Layout layout, DataType type) {
    const tuner::Bytes bytes = tuner::encode(data, type);
    uint64_t offset = params_.add(bytes.data(), bytes.size());
    return add_buffer({BufferKind::Params, 0, bytes.size(), offset, value, layout});
  }

  Values constant_values(const std::string& value) const {
    const graph::HostTensor& t = g_.initializers.at(value);
    const float* f = t.data<float>();
    return Values(f, f + t.numel());
  }

  int task_for(const Workload& w, const NeighbourLayouts& neighbours = {}) {
    tuner::Dispatch d = choose_template(w, target_, history_, neighbours);
    std::string key = d.tpl->name() + "|" + w.str() + "|" + d.config.to_json();
    auto [it, inserted] = task_index_.try_emplace(key, static_cast<int>(p_.tasks.size()));
    if (inserted) {
      std::string name = "k" + std::to_string(p_.tasks.size()) + "_" + identifier(d.tpl->name());
      schedules::ScheduledKernel k = d.tpl->instantiate(w, target_, d.config);
      p_.tasks.push_back({d.tpl, w, d.config, d.untuned, name, 0, k.flops,
                          d.record ? d.record->result.mean_cost() : 0});
      std::vector<DataType> types;
      for (const te::Tensor& t : k.tensors) types.push_back(t.dtype());
      task_args_.push_back(std::move(k.args));
      task_arg_types_.push_back(std::move(types));
    }
    return it->second;
  }

  void add_step(int task, std::vector<int> args, std::string node, std::string op) {
    ++p_.tasks[task].calls;
    p_.steps.push_back({task, std::move(args), std::move(node), std::move(op)});
  }

  // An unpacked constant (a bias) in the type `type` of the kernel argument it feeds.
  int ensure_constant(const std::string& value, DataType type) {
    auto [it, inserted] = constants_.try_emplace(value + "|" + type.str(), -1);
    if (!inserted) return it->second;
    return it->second = param_buffer(value, constant_values(value), 0, type);
  }

  // The buffer holding `value` in `layout`, converting (and remembering the result) if needed.
  int ensure(const std::string& value, Layout layout) {
    auto& have = available_[value];
    if (auto it = have.find(layout); it != have.end()) return it->second;
    internal_check(!g_.is_constant(value)) << "ensure: constant '" << value << "'";
    internal_check(!have.empty()) << "value '" << value << "' is read before it is written";
    std::vector<int64_t> d = dims(value);
    // From a blocked copy when there is one: back to NCHW, or re-blocked in one pass.
    const auto [from, src] = *have.rbegin();
    const int direction = layout == 0 ? 1 : from == 0 ? 0 : 2;
    Workload w{"layout_transform",
               {{"N", d[0]}, {"C", d[1]}, {"H", d[2]}, {"W", d[3]},
                {"block", layout == 0 ? from : layout}, {"direction", direction}},
               dtype_of(value), {}};
    if (direction == 2) w.params["src_block"] = from;
    int task = task_for(w);
    int dst = new_buffer(value, layout);
    add_step(task, {src, dst}, "layout " + value, "LayoutTransform");
    return dst;
  }

  // The blocked layout `value` is already held in (0 when none), for choose_template.
  Layout blocked_layout_of(const std::map<std::string, std::string>& operands,
                           const std::string& name) {
    auto op = operands.find(name);
    if (op == operands.end() || g_.is_constant(op->second)) return 0;
    for (const auto& [layout, buffer] : available_[op->second])
      if (layout > 0) return layout;
    return 0;
  }

  // A Cast between f32 and a half type (assign_precision.h), in the layout its input already
  // has: a cast converts values, not layouts, so a blocked activation stays blocked.
  void lower_cast(const Node& n) {
    const std::string &in = n.inputs.at(0), &out = n.outputs.at(0);
    const DataType from = dtype_of(in), to = dtype_of(out);
    user_check((from == DataType::f32() && is_half(to)) || (is_half(from) && to == DataType::f32()))
        << g_.describe(n) << ": Cast from " << from.str() << " to " << to.str()
        << " is not supported (kiln casts between f32 and f16 or bf16)";
    auto& have = available_[in];
    internal_check(!have.empty()) << "value '" << in << "' is read before it is written";
    const auto [layout, src] = *have.rbegin();
    const int task = task_for(schedules::cast_workload(layout_elements(dims(in), layout),
                                                       is_half(to) ? to : from, to == DataType::f32()));
    const int dst = new_buffer(out, layout);
    add_step(task, {src, dst}, n.name.empty() ? out : n.name, n.op_type);
    if (layout != 0 && std::count(g_.outputs.begin(), g_.outputs.end(), out)) ensure(out, 0);
  }

  // A conv/dense whose data input assign_precision made half runs in that type; its output
  // is f32 (the kernel's out_f32 form) where f32 readers take it.
  void apply_precision(MappedNode& m, const Node& n) {
    for (const char* data : {"data", "A"}) {
      auto it = m.operands.find(data);
      if (it == m.operands.end() || g_.is_constant(it->second)) continue;
      const DataType t = dtype_of(it->second);
      if (!is_half(t)) return;
      m.workload.dtype = t;
      if (dtype_of(n.outputs[0]) == DataType::f32()) m.workload.params["out_f32"] = 1;
      return;
    }
  }

  void lower_node(const Node& n) {
    if (n.op_type == "Cast" && n.inputs.size() == 1 && !g_.is_constant(n.inputs[0]) &&
        dtype_of(n.inputs[0]) != dtype_of(n.outputs.at(0)))
      return lower_cast(n);
    MappedNode m = map_node(g_, n);
    apply_precision(m, n);
    const int task = task_for(m.workload, {blocked_layout_of(m.operands, "data"),
                                           blocked_layout_of(m.operands, "residual")});
    const std::vector<KernelArg> args = task_args_[task];
    const std::vector<DataType> arg_types = task_arg_types_[task];
    const std::string& tpl = p_.tasks[task].tpl->name();
    std::vector<int> bufs;
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& a = args[i];
      if (a.is_output) continue;
      auto it = m.operands.find(a.logical.name);
      internal_check(it != m.operands.end())
          << g_.describe(n) << ": no operand for input '" << a.logical.name << "' of " << tpl;
      const std::string& v = it->second;
      internal_check(numel(dims(v)) == a.logical.elements())
          << g_.describe(n) << ": operand '" << v << "' has " << numel(dims(v))
          << " elements, " << tpl << " expects " << a.logical.elements() << " for "
          << a.logical.name;
      if (g_.is_constant(v) && a.pack) {
        std::string key = v + "|" + std::to_string(task) + "|" + a.logical.name;
        auto [pit, inserted] = packed_.try_emplace(key, -1);
        if (inserted) pit->second = param_buffer(v, a.pack(constant_values(v)), -1, arg_types[i]);
        bufs.push_back(pit->second);
        continue;
      }
      if (g_.is_constant(v)) {
        bufs.push_back(ensure_constant(v, arg_types[i]));
        continue;
      }
      internal_check(dtype_of(v) == arg_types[i])
          << g_.describe(n) << ": operand '" << v << "' is " << dtype_of(v).str() << ", " << tpl
          << " reads " << a.logical.name << " as " << arg_types[i].str();
      bufs.push_back(ensure(v, activation_layout(a, tpl)));
    }
    const KernelArg& out = args.back();
    internal_check(out.is_output) << tpl << ": the last argument is not the output";
    internal_check(arg_types.back() == dtype_of(n.outputs[0]))
        << g_.describe(n) << ": " << tpl << " writes " << arg_types.back().str() << ", the graph "
        << "expects " << dtype_of(n.outputs[0]).str();
    const std::string& value = n.outputs[0];
    for (size_t i = 1; i < n.outputs.size(); ++i)
      user_check(!n.has_output(i)) << g_.describe(n) << ": only one output is supported";
    internal_check(numel(dims(value)) == out.logical.elements())
        << g_.describe(n) << ": " << tpl << " computes " << out.logical.elements()
        << " elements, the graph expects " << numel(dims(value));
    Layout layout = activation_layout(out, tpl);
    bufs.push_back(new_buffer(value, layout));
    add_step(task, std::move(bufs), n.name.empty() ? value : n.name, n.op_type);
    if (layout != 0 && std::count(g_.outputs.begin(), g_.outputs.end(), value)) ensure(value, 0);
  }

  Graph& g_;
  Target target_;
  const tuner::HistoryBest& history_;
  NetworkProgram p_;
  ParamsBuilder params_;
  std::map<std::string, std::map<Layout, int>> available_;
  std::map<std::string, int> task_index_;
  std::vector<std::vector<KernelArg>> task_args_;
  std::vector<std::vector<DataType>> task_arg_types_;  // each task's argument types
  std::map<std::string, int> constants_;  // "value|type" -> params buffer
  std::map<std::string, int> packed_;
};

}  // namespace

NetworkProgram lower_network(Graph& graph, const Target& target, const tuner::HistoryBest& history) {
  return Lowerer(graph, target, history).run();
}

}  // namespace kiln::network
