#include "cost_model/ir_features.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace kiln::cost_model {

namespace {

double log2p(double x) {
  return std::log2(1 + std::max(0.0, x));
}
double stride_feature(double s) {
  return std::isnan(s) ? -1.0 : log2p(std::fabs(s));
}

// "L3.", "B1.": appended piece by piece (GCC 12 warns falsely on "L" + std::string).
std::string tag(char letter, int n) {
  std::string t(1, letter);
  t += std::to_string(n);
  t += '.';
  return t;
}

// Collects values, or names (the layout without a kernel); one function writes both, so
// the two cannot drift apart.
class Sink {
 public:
  explicit Sink(bool names) : names_only_(names) {}
  void add(const std::function<std::string()>& name, double value) {
    if (names_only_)
      names_.push_back(name());
    else
      values_.push_back(static_cast<float>(value));
  }
  std::vector<float> values_;
  std::vector<std::string> names_;

 private:
  bool names_only_;
};

void flatten(const LoopNestSummary& s, Sink& out) {
  const std::vector<int> slots = buffer_slots(s.buffers);
  const size_t depth = s.levels.size();
  const size_t first = depth > kMaxLevels ? depth - kMaxLevels : 0;

  for (int l = 0; l < kMaxLevels; ++l) {
    const LoopLevel* level = first + l < depth ? &s.levels[first + l] : nullptr;
    const std::string p = tag('L', l);
    auto kind_is = [&](ir::ForKind k) { return level && level->kind == k ? 1.0 : 0.0; };
    out.add([&] { return p + "present"; }, level ? 1 : 0);
    out.add([&] { return p + "extent"; }, level ? log2p(level->extent) : 0);
    out.add([&] { return p + "serial"; }, kind_is(ir::ForKind::Serial));
    out.add([&] { return p + "parallel"; }, kind_is(ir::ForKind::Parallel));
    out.add([&] { return p + "vectorized"; }, kind_is(ir::ForKind::Vectorized));
    out.add([&] { return p + "unrolled"; }, kind_is(ir::ForKind::Unrolled));
    out.add([&] { return p + "body_stores"; }, level ? log2p(level->body_stores) : 0);
    out.add([&] { return p + "trips"; }, level ? log2p(level->trips) : 0);
    for (int slot = 0; slot < kBufferSlots; ++slot) {
      const std::string q = p + tag('B', slot);
      const LevelBufferStats* b =
          level && slots[slot] >= 0 ? &level->buffers[slots[slot]] : nullptr;
      if (b && !b->accessed) b = nullptr;
      out.add([&] { return q + "accesses"; }, b ? log2p(b->accesses) : 0);
      out.add([&] { return q + "loop_stride"; }, b ? stride_feature(b->loop_stride) : 0);
      out.add([&] { return q + "innermost_stride"; }, b ? stride_feature(b->innermost_stride) : 0);
      out.add([&] { return q + "touched_bytes"; }, b ? log2p(b->touched_bytes) : 0);
      out.add([&] { return q + "reuse"; }, b ? log2p(b->reuse) : 0);
    }
  }

  for (int slot = 0; slot < kBufferSlots; ++slot) {
    const std::string p = tag('B', slot);
    const BufferInfo* b = slots[slot] >= 0 ? &s.buffers[slots[slot]] : nullptr;
    out.add([&] { return p + "present"; }, b ? 1 : 0);
    out.add([&] { return p + "written"; }, b && b->written ? 1 : 0);
    out.add([&] { return p + "element_bytes"; }, b ? b->dtype.bytes() : 0);
  }

  const KernelTotals& t = s.totals;
  out.add([] { return "kernel.flops"; }, log2p(t.flops));
  out.add([] { return "kernel.bytes_loaded"; }, log2p(t.bytes_loaded));
  out.add([] { return "kernel.bytes_stored"; }, log2p(t.bytes_stored));
  out.add([] { return "kernel.arithmetic_intensity"; }, log2p(t.arithmetic_intensity));
  out.add([] { return "kernel.vector_ops"; }, log2p(t.vector_ops));
  out.add([] { return "kernel.parallel_extent"; }, log2p(t.parallel_extent));
  out.add([] { return "kernel.vector_width"; }, log2p(t.vector_width));
  out.add([] { return "kernel.branches"; }, log2p(t.branches));
  out.add([] { return "kernel.local_bytes"; }, log2p(t.local_bytes));
  out.add([] { return "kernel.chain_depth"; }, static_cast<double>(depth));
}

}  // namespace

std::vector<int> buffer_slots(const std::vector<BufferInfo>& buffers) {
  std::vector<int> slots;
  auto take = [&](auto wanted, size_t limit) {
    for (size_t i = 0; i < buffers.size() && limit > 0; ++i)
      if (wanted(buffers[i])) slots.push_back(static_cast<int>(i)), --limit;
  };
  take([](const BufferInfo& b) { return b.is_arg && b.written; }, kGlobalSlots);
  take([](const BufferInfo& b) { return b.is_arg && !b.written; }, kGlobalSlots - slots.size());
  slots.resize(kGlobalSlots, -1);
  take([](const BufferInfo& b) { return !b.is_arg; }, kLocalSlots);
  slots.resize(kBufferSlots, -1);
  return slots;
}

const std::vector<std::string>& ir_feature_names() {
  static const std::vector<std::string> names = [] {
    Sink sink(true);
    flatten(LoopNestSummary{}, sink);
    return sink.names_;
  }();
  return names;
}

size_t ir_feature_count() {
  return ir_feature_names().size();
}

std::vector<float> ir_features(const LoopNestSummary& summary) {
  Sink sink(false);
  flatten(summary, sink);
  return std::move(sink.values_);
}

std::vector<float> ir_features(const ir::LoweredFunc& f) {
  return ir_features(summarize_loop_nest(f));
}

}  // namespace kiln::cost_model
