// ParamsFirstUse (params_first_use.h): the hook that checks params chunks between steps.
#include "params_first_use.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <utility>

#include "kiln/runtime.h"

namespace kiln {
namespace {

// The checker of the run in progress on this thread: the hook is one function shared by every
// model (and by two loads of one model.so, which share the hook's slot), so the run it belongs
// to is found through the thread that makes the call.
thread_local ParamsFirstUse* t_checking = nullptr;

// Installing and removing the hook: under one lock, with the count of first runs in progress
// (any model), so that a first run never loses the hook to another ending at the same moment
// (two loads of one model.so share its slot). Only first runs take the lock; later runs find
// the slot empty again and pay nothing for the check. A hook left behind (another model.so's
// first run was still going when this one's ended) returns at once.
std::mutex g_slots;
int g_first_runs = 0;

// " N" at the front of `text`: the number, and `text` advanced past it; false when malformed.
bool read_number(std::string_view& text, uint64_t& value) {
  if (text.size() < 2 || text[0] != ' ') return false;
  const auto [end, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), value);
  if (ec != std::errc()) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

}  // namespace

ParamsFirstUse::ParamsFirstUse(const ParamsFile& params, std::string_view points, ThreadPool& pool)
    : params_(params), points_(points), pool_(pool), chunks_(params_chunk_count(params.bytes())) {}

int32_t ParamsFirstUse::run_checked(kiln_model_step_hook_fn* hook, kiln_model_run_fn entry,
                                    void* const* inputs, void* const* outputs, void* workspace,
                                    const void* params) {
  // Without the hook, or without the points that say which step needs what (a record with no
  // "verify" line), nothing can be checked between steps: everything is, before the first.
  const bool hooked = install(hook);
  struct Uninstall {
    kiln_model_step_hook_fn* slot;
    bool hooked;
    ~Uninstall() {
      if (hooked) uninstall(slot);
    }
  } uninstall_at_exit{hook, hooked};
  if (!hooked || points_.empty()) check_up_to(chunks_);
  if (!check_before(0)) fail();
  ParamsFirstUse* const previous = t_checking;
  if (hooked) t_checking = this;
  const int32_t status = entry(inputs, outputs, workspace, params);
  t_checking = previous;
  if (bad_ != kNone) fail();
  check_up_to(chunks_);
  return status;
}

int32_t ParamsFirstUse::hook(int32_t step) {
  ParamsFirstUse* p = t_checking;
  if (!p || p->done()) return 0;
  return p->check_before(static_cast<uint64_t>(step) + 1) ? 0 : KILN_STATUS_PARAMS_CORRUPT;
}

bool ParamsFirstUse::install(kiln_model_step_hook_fn* slot) {
  if (!slot) return false;
  // The generated code reads the slot as volatile; it is written the same way.
  auto* volatile_slot = reinterpret_cast<volatile kiln_model_step_hook_fn*>(slot);
  std::lock_guard<std::mutex> lock(g_slots);
  const kiln_model_step_hook_fn current = *volatile_slot;
  if (current != nullptr && current != &ParamsFirstUse::hook) return false;  // a profiler's
  *volatile_slot = &ParamsFirstUse::hook;
  ++g_first_runs;
  return true;
}

void ParamsFirstUse::uninstall(kiln_model_step_hook_fn* slot) {
  auto* volatile_slot = reinterpret_cast<volatile kiln_model_step_hook_fn*>(slot);
  std::lock_guard<std::mutex> lock(g_slots);
  if (--g_first_runs == 0 && *volatile_slot == &ParamsFirstUse::hook) *volatile_slot = nullptr;
}

bool ParamsFirstUse::check_before(uint64_t step) noexcept {
  uint64_t need = checked_;
  while (!points_.empty()) {
    std::string_view rest = points_;
    uint64_t at = 0, chunks = 0;
    if (!read_number(rest, at) || !read_number(rest, chunks)) {
      need = chunks_;  // malformed: check everything now
      points_ = {};
      break;
    }
    if (at > step) break;
    need = std::max(need, chunks);
    points_ = rest;
  }
  return check_chunks(need);
}

bool ParamsFirstUse::check_chunks(uint64_t end) noexcept {
  if (bad_ != kNone) return false;
  if (end <= checked_) return true;
  // At least a chunk per thread at a time: one chunk alone would leave the others idle.
  end = std::min(std::max(end, checked_ + static_cast<uint64_t>(pool_.num_threads())), chunks_);
  // noexcept: nothing here throws (the hash allocates nothing, the pool reports by status);
  // if it ever did, terminating beats unwinding through the generated code.
  const auto* payload = static_cast<const uint8_t*>(params_.payload());
  const uint64_t bad = params_first_bad_chunk(payload, params_.bytes(), params_.chunk_table(),
                                              checked_, end, &pool_);
  checked_ = bad;
  if (bad == end) return true;
  bad_ = bad;
  return false;
}

void ParamsFirstUse::fail() const {
  params_chunk_error(params_.path(), bad_);
}

}  // namespace kiln
