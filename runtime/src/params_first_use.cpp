// ParamsFirstUse (params_first_use.h): the hook that checks params chunks between steps.
#include "params_first_use.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "kiln/runtime.h"

namespace kiln {
namespace {

// The checker of the run in progress on this thread: the hook is one function shared by every
// model (and by two loads of one model.so, which share the hook's slot), so the run it belongs
// to is found through the thread that makes the call.
thread_local ParamsFirstUse* t_checking = nullptr;

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
  // The slot is read by the generated code as volatile; written the same way. It is left set:
  // another Model of the same model.so may be in its first run, and the hook returns at once
  // when no check is pending on its thread.
  auto* volatile_slot = reinterpret_cast<volatile kiln_model_step_hook_fn*>(slot);
  if (!slot) return false;
  const kiln_model_step_hook_fn current = *volatile_slot;
  if (current == &ParamsFirstUse::hook) return true;
  if (current != nullptr) return false;  // a profiler's: check everything up front instead
  *volatile_slot = &ParamsFirstUse::hook;
  return true;
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
