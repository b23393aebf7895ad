#include "network/lower_network.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

#include "kiln/params.h"
#include "network/blocked_channels.h"
#include "network/blocked_concat.h"
#include "network/blocked_elementwise.h"
#include "network/choose_template.h"
#include "network/op_table.h"
#include "schedules/elementwise/cast.h"
#include "schedules/layout.h"
#include "tuner/host_values.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;
using ir::DataType;
using schedules::KernelArg;
using schedules::Values;
using schedules::Workload;

namespace {

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

bool is_half(DataType t) {
  return t == DataType::bf16() || t == DataType::f16();
}

bool is_8bit(DataType t) {
  return t == DataType::u8() || t == DataType::i8();
}

// Types the kernels hold as they are: the half types of a --dtype region and the 8-bit data
// of quantized operators. Everything else is held in f32.
bool held_as_is(DataType t) {
  return is_half(t) || is_8bit(t);
}

// Model inputs and outputs the caller's buffers hold as the kernels do (f32, and 8-bit data
// read by or written from quantized operators); others are converted at the edge.
bool edge_as_is(DataType t) {
  return t == DataType::f32() || is_8bit(t);
}

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

class Lowerer {
 public:
  Lowerer(Graph& g, const Target& t, const tuner::HistoryBest& h, const NodeChoices* choices)
      : g_(g), target_(t), history_(h), choices_(choices) {}

  NetworkProgram run() {
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const std::string& v = g_.inputs[i];
      std::vector<int64_t> d = dims(v);
      user_check(holds_dtype(dtype(v)) || is_8bit(dtype(v)))
          << g_.source << ": graph input '" << v << "' is " << dtype(v).str() << "; " << kDtypeRule;
      p_.input_names.push_back(v);
      p_.input_shapes.push_back(d);
      p_.input_dtypes.push_back(dtype(v));
      const Layout held = edge_as_is(dtype(v)) ? 0 : kModelDtype;
      available_[v][held] =
          add_buffer({BufferKind::Input, static_cast<int>(i),
                      static_cast<uint64_t>(numel(d) * dtype(v).bytes()), 0, v, held});
    }
    for (const std::string& v : g_.outputs) {
      user_check(!g_.is_constant(v) &&
                 std::find(g_.inputs.begin(), g_.inputs.end(), v) == g_.inputs.end())
          << g_.source << ": graph output '" << v
          << "' is a graph input or a constant; kiln compiles only computed outputs";
      user_check(std::count(g_.outputs.begin(), g_.outputs.end(), v) == 1)
          << g_.source << ": graph output '" << v << "' is listed twice";
      user_check(holds_dtype(dtype(v)) || is_8bit(dtype(v)))
          << g_.source << ": graph output '" << v << "' is " << dtype(v).str() << "; "
          << kDtypeRule;
      p_.output_names.push_back(v);
      p_.output_shapes.push_back(dims(v));
      p_.output_dtypes.push_back(dtype(v));
    }
    for (const Node& n : g_.nodes) lower_node(n);
    for (const std::string& v : g_.outputs)
      internal_check(available_[v].count(edge_as_is(dtype(v)) ? 0 : kModelDtype))
          << "graph output '" << v << "' was never written";
    p_.params = params_.payload();
    return std::move(p_);
  }

 private:
  std::vector<int64_t> dims(const std::string& v) const {
    std::optional<graph::ValueType> t = g_.type_of(v);
    user_check(t && t->is_concrete()) << g_.source << ": value '" << v << "' has no concrete shape";
    user_check(holds_dtype(t->dtype) || held_as_is(t->dtype))
        << g_.source << ": value '" << v << "' is " << t->dtype.str() << "; " << kDtypeRule;
    return t->dims();
  }

  // The value's type in the graph.
  DataType dtype(const std::string& v) const { return g_.type_of(v)->dtype; }
  // The type kernels hold it in: f16/bf16 where --dtype made it so (assign_precision.h), u8/i8
  // between quantized operators, f32 otherwise (integers and truth values included,
  // op_table.h: holds_dtype).
  DataType held(const std::string& v) const {
    return held_as_is(dtype(v)) ? dtype(v) : DataType::f32();
  }

  int add_buffer(Buffer b) {
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  // Whether `value` in `layout` is the same memory as in NCHW: blocks of one channel are,
  // and so is a [N,C,1,1] vector (a pooled one) in blocks that divide C. One buffer then
  // serves both, and nothing copies it.
  bool nchw_memory(const std::string& value, Layout layout) const {
    if (layout == 0) return true;
    const std::vector<int64_t> d = dims(value);
    return layout > 0 && d.size() == 4 &&
           (layout == 1 || (d[2] == 1 && d[3] == 1 && d[1] % layout == 0));
  }

  // A fresh buffer for `value` in `layout`: the model's output when it is a graph output in
  // the layout and type the caller reads, else workspace.
  int new_buffer(const std::string& value, Layout layout) {
    std::vector<int64_t> d = dims(value);
    auto out = std::find(g_.outputs.begin(), g_.outputs.end(), value);
    const bool f32 = dtype(value) == DataType::f32() || held_as_is(dtype(value));
    const uint64_t bytes =
        layout == kModelDtype
            ? static_cast<uint64_t>(numel(d) * dtype(value).bytes())
            : static_cast<uint64_t>(layout_elements(d, layout)) * held(value).bytes();
    const bool as_read = f32 ? nchw_memory(value, layout) : layout == kModelDtype;
    int id = out != g_.outputs.end() && as_read
                 ? add_buffer({BufferKind::Output, static_cast<int>(out - g_.outputs.begin()),
                               bytes, 0, value, 0})
                 : add_buffer({BufferKind::Workspace, 0, bytes, 0, value, layout});
    available_[value][layout] = id;
    if (layout > 0 && nchw_memory(value, layout)) available_[value][0] = id;
    return id;
  }

  // Constants are converted to the kernel argument's type here, at compile time.
  int param_buffer(const std::string& value, const Values& data, Layout layout, DataType type) {
    const tuner::Bytes bytes = tuner::encode(data, type);
    uint64_t offset = params_.add(bytes.data(), bytes.size());
    return add_buffer({BufferKind::Params, 0, bytes.size(), offset, value, layout});
  }

  // A constant's values in f32, as kernels hold every value (integers and bools included).
  Values constant_values(const std::string& value) const {
    const graph::HostTensor& t = g_.initializers.at(value);
    if (t.dtype() != graph::DataType::f32()) {
      const std::vector<double> v = t.to_f64();
      return Values(v.begin(), v.end());
    }
    const float* f = t.data<float>();
    return Values(f, f + t.numel());
  }

  int task_for(const Workload& w, const NeighbourLayouts& neighbours = {},
               const NodeChoice* chosen = nullptr) {
    const int id = chosen ? task_with(*chosen->tpl, w, chosen->config, chosen->untuned,
                                      chosen->cost_s, neighbours)
                          : [&] {
                              tuner::Dispatch d = choose_template(w, target_, history_, neighbours);
                              return task_with(*d.tpl, w, d.config, d.untuned,
                                               d.record ? d.record->result.cost() : 0, neighbours);
                            }();
    note_record(p_.tasks[id]);
    return id;
  }

  // A tuned kernel built from the records' best: the spread of its times and how it compared
  // with the untuned config where the tune timed both side by side (history_best.h).
  void note_record(Task& t) const {
    if (t.untuned) return;
    const std::optional<tuner::BestConfig> best = history_.query(t.workload, target_);
    if (!best || best->tpl != t.tpl || best->config != t.config) return;
    t.tuned_spread = best->record.result.spread();
    t.verdict = best->verdict;
  }

  int task_with(const schedules::OpTemplate& tpl, const Workload& w,
                const schedules::Config& config, bool untuned, double tuned_cost_s,
                const NeighbourLayouts& neighbours) {
    std::string key = tpl.name() + "|" + w.str() + "|" + config.to_json();
    auto [it, inserted] = task_index_.try_emplace(key, static_cast<int>(p_.tasks.size()));
    if (inserted) {
      std::string name = "k" + std::to_string(p_.tasks.size()) + "_" + identifier(tpl.name());
      schedules::ScheduledKernel k = tpl.instantiate(w, target_, config);
      p_.tasks.push_back({&tpl, w, config, untuned, name, 0, k.flops, tuned_cost_s});
      if (!untuned) {
        const tuner::Dispatch fallback = choose_template(w, target_, no_records_, neighbours);
        p_.tasks.back().kept_untuned_config = fallback.tpl == &tpl && fallback.config == config;
      }
      std::vector<DataType> types;
      for (const te::Tensor& t : k.tensors) types.push_back(t.dtype());
      task_args_.push_back(std::move(k.args));
      task_arg_types_.push_back(std::move(types));
    }
    return it->second;
  }

  // Converts a model input of bool / int type to f32 (to_f32), or a value to the model
  // output's type; the new buffer holds it.
  int convert_dtype(const std::string& value, int src, bool to_f32) {
    const ir::DataType t =
        dtype(value) == ir::DataType::boolean() ? ir::DataType::u8() : dtype(value);
    const Workload w = schedules::cast_workload(numel(dims(value)), t, to_f32);
    const schedules::OpTemplate& tpl = schedules::cast_template();
    int task = task_with(tpl, w, tpl.fallback(w, target_), true, 0, {});
    int dst = new_buffer(value, to_f32 ? 0 : kModelDtype);
    add_step(task, {src, dst}, "cast " + value, "Cast");
    return dst;
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
    if (layout > 0 && have.count(0) && nchw_memory(value, layout)) return have[layout] = have.at(0);
    internal_check(!g_.is_constant(value)) << "ensure: constant '" << value << "'";
    internal_check(!have.empty()) << "value '" << value << "' is read before it is written";
    if (layout == kModelDtype) return convert_dtype(value, ensure(value, 0), false);
    if (!have.count(0) && have.count(kModelDtype)) {
      const int f32 = convert_dtype(value, have.at(kModelDtype), true);
      if (layout == 0) return f32;
    }
    std::vector<int64_t> d = dims(value);
    // From a blocked copy when there is one: back to NCHW, or re-blocked in one pass.
    const auto [from, src] = *have.rbegin();
    int task = task_for(conversion_workload(d, from, layout, held(value)));
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
      if (layout > 0 && !nchw_memory(op->second, layout)) return layout;
    return 0;
  }

  // A rank-4 operand's shape padded with leading 1s, as map_elementwise gives it.
  std::vector<int64_t> rank4(const Workload& w, char operand) const {
    std::vector<int64_t> d;
    for (int i = 0; i < 4; ++i) d.push_back(w.param(std::string(1, operand) + std::to_string(i)));
    return d;
  }

  // The buffer of an operand of a blocked elementwise kernel (-1: it cannot be fed so).
  int blocked_operand(const std::string& v, const std::vector<int64_t>& d, BlockedOperandKind kind,
                      Layout block) {
    if (kind == BlockedOperandKind::PerImage)  // the same memory in every layout
      return g_.is_constant(v) ? ensure_constant(v, DataType::f32()) : ensure(v, 0);
    if (g_.is_constant(v)) {
      const std::string key = v + "|nchwc" + std::to_string(block);
      auto [it, inserted] = packed_.try_emplace(key, -1);
      if (inserted)
        it->second = param_buffer(
            v, schedules::pack_nchwc(constant_values(v), d[0], d[1], d[2], d[3], block), block,
            DataType::f32());
      return it->second;
    }
    return dims(v).size() == 4 ? ensure(v, block) : -1;
  }

  // Elementwise ops whose activations are in NCHW[b]c already run in that layout, so that
  // the convs around them need no conversions (blocked_elementwise.h). False when the node
  // is not such an op or an operand cannot be fed in the layout.
  bool lower_blocked_elementwise(const Node& n, const MappedNode& m) {
    const std::vector<int64_t> out = dims(n.outputs[0]);
    if (out.size() != 4 || dtype(n.outputs[0]) != ir::DataType::f32()) return false;
    Layout block = 0;
    for (const auto& [name, v] : m.operands)
      if (!g_.is_constant(v) && dims(v) == out)
        block = std::max(block, blocked_layout_of(m.operands, name));
    std::optional<BlockedElementwise> bw = blocked_elementwise(m.workload, block);
    if (!bw) return false;
    std::vector<int> bufs;
    for (size_t o = 0; o < bw->kinds.size(); ++o) {
      const char name = static_cast<char>('a' + o);
      const std::string& v = m.operands.at(std::string(1, name));
      bufs.push_back(blocked_operand(v, rank4(m.workload, name), bw->kinds[o], block));
      if (bufs.back() < 0) return false;
    }
    const int task = task_for(bw->workload);
    bufs.push_back(new_buffer(n.outputs[0], block));
    add_step(task, std::move(bufs), n.name.empty() ? n.outputs[0] : n.name, n.op_type);
    if (std::count(g_.outputs.begin(), g_.outputs.end(), n.outputs[0])) ensure(n.outputs[0], 0);
    return true;
  }

  // A channel concat whose inputs are blocked already runs on blocks (blocked_concat.h), so
  // that the convs around it need no conversions: in the widest block an input is held in,
  // or, where some input's channels do not divide into it, in the widest half of it that
  // they all divide into (inputs re-blocked directly: fewer conversions than out to NCHW and
  // the result back). False when no input is blocked, no block of at least 4 channels fits,
  // or an input is a constant.
  bool lower_blocked_concat(const Node& n, const MappedNode& m) {
    if (m.workload.op != "concat" || dtype(n.outputs[0]) != ir::DataType::f32()) return false;
    Layout block = 0;
    for (const auto& [name, v] : m.operands) {
      if (g_.is_constant(v)) return false;
      block = std::max(block, blocked_layout_of(m.operands, name));
    }
    std::optional<Workload> w;
    for (; block >= 4 && !w; block /= 2) w = blocked_concat(m.workload, block);
    if (!w) return false;
    block = w->param("D4");
    std::vector<int> bufs;
    for (int64_t k = 0; k < w->param("inputs"); ++k)
      bufs.push_back(ensure(m.operands.at("X" + std::to_string(k)), block));
    const int task = task_for(*w);
    bufs.push_back(new_buffer(n.outputs[0], block));
    add_step(task, std::move(bufs), node_key(n.name, n.outputs), n.op_type);
    if (std::count(g_.outputs.begin(), g_.outputs.end(), n.outputs[0])) ensure(n.outputs[0], 0);
    return true;
  }

  // A channel shuffle whose inputs are blocked runs on blocks (blocked_channels.h): each
  // input read in the block it is held in, the output in the widest block (that of an input,
  // or a half of it) that the kernel runs by whole vectors, a block that divides a group's run
  // of channels first. False when no input is blocked, no block fits, or an input is a
  // constant.
  bool lower_blocked_channel_shuffle(const Node& n, const MappedNode& m) {
    if (m.workload.op != "channel_shuffle" || dtype(n.outputs[0]) != DataType::f32()) return false;
    std::vector<Layout> held;
    Layout widest = 0;
    for (int64_t k = 0; k < m.workload.param("inputs"); ++k) {
      const std::string name = "X" + std::to_string(k);
      if (g_.is_constant(m.operands.at(name))) return false;
      held.push_back(blocked_layout_of(m.operands, name));
      widest = std::max(widest, held.back());
    }
    // Blocks that divide a group's run of channels first: the halves a ShuffleNet unit
    // slices its input into then take whole blocks (lower_blocked_channel_slice).
    const int64_t run = dims(n.outputs[0]).at(1) / m.workload.param("group");
    std::optional<Workload> w;
    for (bool whole_runs : {true, false})
      for (Layout block = widest; block >= 4 && !w; block /= 2)
        if (!whole_runs || run % block == 0) w = blocked_channel_shuffle(m.workload, held, block);
    if (!w) return false;
    std::vector<int> bufs;
    for (int64_t k = 0; k < w->param("inputs"); ++k)
      bufs.push_back(
          ensure(m.operands.at("X" + std::to_string(k)), w->param("B" + std::to_string(k))));
    return add_blocked_step(n, *w, std::move(bufs), w->param("block"));
  }

  // A slice of whole channel blocks of a blocked value copies those blocks
  // (blocked_channels.h): the halves a ShuffleNet unit splits its input into stay blocked.
  bool lower_blocked_channel_slice(const Node& n, const MappedNode& m) {
    if (m.workload.op != "slice" || dtype(n.outputs[0]) != DataType::f32()) return false;
    const Layout block = blocked_layout_of(m.operands, "X");
    if (block <= 0) return false;
    const std::string& x = m.operands.at("X");
    std::optional<Workload> w =
        blocked_channel_slice(m.workload, dims(x), dims(n.outputs[0]), block);
    if (!w) return false;
    return add_blocked_step(n, *w, {ensure(x, block)}, block);
  }

  // The step of a kernel the lowering chose for blocks: `inputs`, then the node's output in
  // `block` (converted to NCHW too when it is a graph output). Returns true.
  bool add_blocked_step(const Node& n, const Workload& w, std::vector<int> inputs, Layout block) {
    const int task = task_for(w);
    inputs.push_back(new_buffer(n.outputs[0], block));
    add_step(task, std::move(inputs), node_key(n.name, n.outputs), n.op_type);
    if (std::count(g_.outputs.begin(), g_.outputs.end(), n.outputs[0])) ensure(n.outputs[0], 0);
    return true;
  }

  // A Pad of H and W alone whose input is blocked already runs on the blocks: the rank-5 pad
  // of [N, C/b, H, W, b] on axes 2 and 3, so that TF-style explicit padding before a conv
  // (Hugging Face's MobileNetV2, the Pad that split_asymmetric_pads puts before a conv) costs
  // no conversions. The padded channels of a last partial block get the (finite) pad value,
  // which the next conv's zero weights for them cancel.
  bool lower_blocked_pad(const Node& n, const MappedNode& m) {
    const Workload& w = m.workload;
    if (w.op != "pad" || w.param("ndim") != 4 || dtype(n.outputs[0]) != DataType::f32())
      return false;
    for (const char* k : {"B0", "A0", "B1", "A1"})
      if (w.param(k) != 0) return false;
    const Layout block = blocked_layout_of(m.operands, "X");
    if (block <= 0) return false;
    Workload blocked = w;
    blocked.params["ndim"] = 5;
    blocked.params["D1"] = (w.param("D1") + block - 1) / block;
    blocked.params["D4"] = block, blocked.params["B4"] = 0, blocked.params["A4"] = 0;
    std::vector<int> bufs = {ensure(m.operands.at("X"), block)};
    const int task = task_for(blocked);
    bufs.push_back(new_buffer(n.outputs[0], block));
    add_step(task, std::move(bufs), node_key(n.name, n.outputs), n.op_type);
    if (std::count(g_.outputs.begin(), g_.outputs.end(), n.outputs[0])) ensure(n.outputs[0], 0);
    return true;
  }

  // A Cast between f32 and a half type (assign_precision.h), in its input's layout.
  void lower_cast(const Node& n) {
    const std::string &in = n.inputs.at(0), &out = n.outputs.at(0);
    const DataType from = dtype(in), to = dtype(out);
    user_check((from == DataType::f32() && is_half(to)) || (is_half(from) && to == DataType::f32()))
        << g_.describe(n) << ": Cast from " << from.str() << " to " << to.str()
        << " is not supported (kiln casts between f32 and f16 or bf16)";
    lower_in_input_layout(n, [&](int64_t elements) {
      return schedules::cast_workload(elements, is_half(to) ? to : from, to == DataType::f32());
    });
  }

  // A flat conversion (a Cast, QuantizeLinear, DequantizeLinear) in the layout its input
  // already has: it converts values, not layouts, so a blocked activation stays blocked (the
  // padded channels of a quantized one become the zero point, which the int8 kernels'
  // zero-padded weights multiply away). `workload` is the kernel's for that many elements.
  void lower_in_input_layout(const Node& n, const std::function<Workload(int64_t)>& workload) {
    const std::string &in = n.inputs.at(0), &out = n.outputs.at(0);
    auto& have = available_[in];
    internal_check(!have.empty()) << "value '" << in << "' is read before it is written";
    const auto [layout, src] = *have.rbegin();
    const int task = task_for(workload(layout_elements(dims(in), layout)));
    const int dst = new_buffer(out, layout);
    add_step(task, {src, dst}, n.name.empty() ? out : n.name, n.op_type);
    if (layout != 0 && std::count(g_.outputs.begin(), g_.outputs.end(), out)) ensure(out, 0);
  }

  // A flat operator of two same-shape operands (QLinearAdd: inputs 0 and 3) in the layout its
  // first operand is held in, the second brought to it. The padded channels of blocked 8-bit
  // operands hold their zero points, and so get the output's.
  void lower_flat_pair(const Node& n, Workload w) {
    const std::string &a = n.inputs.at(0), &b = n.inputs.at(3), &out = n.outputs.at(0);
    auto& have = available_[a];
    internal_check(!have.empty()) << "value '" << a << "' is read before it is written";
    const auto [layout, src_a] = *have.rbegin();
    const int src_b = ensure(b, layout);
    w.params["elements"] = layout_elements(dims(a), layout);
    const int task = task_for(w);
    const int dst = new_buffer(out, layout);
    add_step(task, {src_a, src_b, dst}, n.name.empty() ? out : n.name, n.op_type);
    if (layout != 0 && std::count(g_.outputs.begin(), g_.outputs.end(), out)) ensure(out, 0);
  }

  // A conv/dense whose data input assign_precision made half runs in that type; its output
  // is f32 (the kernel's out_f32 form) where f32 readers take it.
  void apply_precision(MappedNode& m, const Node& n) {
    for (const char* data : {"data", "A"}) {
      auto it = m.operands.find(data);
      if (it == m.operands.end() || g_.is_constant(it->second)) continue;
      const DataType t = dtype(it->second);
      if (!is_half(t)) return;
      m.workload.dtype = t;
      if (dtype(n.outputs[0]) == DataType::f32()) m.workload.params["out_f32"] = 1;
      return;
    }
  }

  void lower_node(const Node& n) {
    // Casts into and out of a half region (assign_precision.h); other Casts map to kernels.
    if (n.op_type == "Cast" && n.inputs.size() == 1 && !g_.is_constant(n.inputs[0]) &&
        (is_half(dtype(n.inputs[0])) || is_half(dtype(n.outputs.at(0)))))
      return lower_cast(n);
    MappedNode m = map_node(g_, n);
    if (m.workload.op == "quantize" || m.workload.op == "dequantize")
      return lower_in_input_layout(n, [&](int64_t elements) {
        Workload w = m.workload;
        w.params["elements"] = elements;
        return w;
      });
    if (m.workload.op == "qlinear_add") return lower_flat_pair(n, m.workload);
    apply_precision(m, n);
    if (lower_blocked_elementwise(n, m) || lower_blocked_concat(n, m) || lower_blocked_pad(n, m) ||
        lower_blocked_channel_shuffle(n, m) || lower_blocked_channel_slice(n, m))
      return;
    const NodeChoice* chosen = nullptr;
    if (choices_)
      if (auto it = choices_->find(node_key(n.name, n.outputs)); it != choices_->end())
        chosen = &it->second;
    const Layout data = blocked_layout_of(m.operands, m.operands.count("data") ? "data" : "X");
    const int task =
        task_for(m.workload, {data, blocked_layout_of(m.operands, "residual")}, chosen);
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
          << g_.describe(n) << ": operand '" << v << "' has " << numel(dims(v)) << " elements, "
          << tpl << " expects " << a.logical.elements() << " for " << a.logical.name;
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
      internal_check(held(v) == arg_types[i])
          << g_.describe(n) << ": operand '" << v << "' is " << held(v).str() << ", " << tpl
          << " reads " << a.logical.name << " as " << arg_types[i].str();
      bufs.push_back(ensure(v, activation_layout(a, tpl)));
    }
    const KernelArg& out = args.back();
    internal_check(out.is_output) << tpl << ": the last argument is not the output";
    internal_check(arg_types.back() == held(n.outputs[0]))
        << g_.describe(n) << ": " << tpl << " writes " << arg_types.back().str() << ", the graph "
        << "expects " << held(n.outputs[0]).str();
    const std::string& value = n.outputs[0];
    for (size_t i = 1; i < n.outputs.size(); ++i)
      user_check(!n.has_output(i)) << g_.describe(n) << ": only one output is supported";
    internal_check(numel(dims(value)) == out.logical.elements())
        << g_.describe(n) << ": " << tpl << " computes " << out.logical.elements()
        << " elements, the graph expects " << numel(dims(value));
    Layout layout = activation_layout(out, tpl);
    bufs.push_back(new_buffer(value, layout));
    add_step(task, std::move(bufs), node_key(n.name, n.outputs), n.op_type);
    if (std::count(g_.outputs.begin(), g_.outputs.end(), value))
      ensure(value, edge_as_is(dtype(value)) ? 0 : kModelDtype);
  }

  Graph& g_;
  Target target_;
  const tuner::HistoryBest& history_;
  const tuner::HistoryBest no_records_;  // what an untuned compile would choose
  const NodeChoices* choices_;
  NetworkProgram p_;
  ParamsBuilder params_;
  std::map<std::string, std::map<Layout, int>> available_;
  std::map<std::string, int> task_index_;
  std::vector<std::vector<KernelArg>> task_args_;
  std::vector<std::vector<DataType>> task_arg_types_;  // each task's argument types
  std::map<std::string, int> constants_;               // "value|type" -> params buffer
  std::map<std::string, int> packed_;
};

}  // namespace

Workload conversion_workload(const std::vector<int64_t>& d, Layout from, Layout to,
                             DataType dtype) {
  const int direction = to == 0 ? 1 : from == 0 ? 0 : 2;
  Workload w{"layout_transform",
             {{"N", d[0]},
              {"C", d[1]},
              {"H", d[2]},
              {"W", d[3]},
              {"block", to == 0 ? from : to},
              {"direction", direction}},
             dtype,
             {}};
  if (direction == 2) w.params["src_block"] = from;
  return w;
}

NetworkProgram lower_network(Graph& graph, const Target& target, const tuner::HistoryBest& history,
                             const NodeChoices* choices) {
  return Lowerer(graph, target, history, choices).run();
}

}  // namespace kiln::network
