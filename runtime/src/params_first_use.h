// Private to the runtime: checking a model's params chunk by chunk, each just before the first
// step that reads it, rather than the whole file at load.
//
// Why: hashing ResNet-18's 81 MB of params is most of what its load costs, while the first run
// reads the same bytes anyway. Checked on first use, load only maps the file and checks its
// chunk table (params.h), and each chunk is hashed right before the step that needs it, which
// then finds it in cache. No step ever reads an unchecked chunk: the model's "verify" line
// (kernel_abi.h) says which chunks each step needs, and the step hook stops the run before a
// step whose chunks do not match.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/kernel_abi.h"
#include "kiln/params.h"

namespace kiln {

class ParamsFirstUse {
 public:
  // `params` must outlive this; `points` is the info record's "verify" line after its keyword
  // (" S C S C ...": before step S, chunks [0, C)), read as the steps come. A malformed line
  // only costs the overlap: every chunk is then checked before the next step.
  ParamsFirstUse(const ParamsFile& params, std::string_view points, ThreadPool& pool);

  // Whether every chunk has been checked (and matched): runs need no hook any more.
  bool done() const { return checked_ == chunks_; }

  // Runs kiln_model_run (`entry`, with its four arguments) with the checks: checks what step 0
  // needs, installs the hook into the model's slot `hook` (or, when a profiler's hook holds it,
  // checks everything first), runs, removes the hook, then checks any chunk no step reached.
  // Throws RuntimeError(kParams) naming the chunk on a mismatch; returns the run's status.
  int32_t run_checked(kiln_model_step_hook_fn* hook, kiln_model_run_fn entry, void* const* inputs,
                      void* const* outputs, void* workspace, const void* params);

  // Checks every chunk not checked yet; throws as run_checked does.
  void check_all() { check_up_to(chunks_); }

 private:
  static constexpr uint64_t kNone = ~uint64_t(0);

  // Sets the hook into the model's slot unless a profiler's holds it; false then.
  bool install(kiln_model_step_hook_fn* hook);
  static void uninstall(kiln_model_step_hook_fn* hook);
  static int32_t hook(int32_t step);

  // Checks the chunks step `step` needs; false on a mismatch (bad_ set). Never throws: it runs
  // inside kiln_model_run.
  bool check_before(uint64_t step) noexcept;
  bool check_chunks(uint64_t end) noexcept;
  void check_up_to(uint64_t end) {
    if (!check_chunks(end)) fail();
  }
  [[noreturn]] void fail() const;  // names chunk bad_

  const ParamsFile& params_;
  std::string_view points_;  // the points not reached yet
  ThreadPool& pool_;
  uint64_t chunks_;
  uint64_t checked_ = 0;  // chunks [0, checked_) matched
  uint64_t bad_ = kNone;
};

}  // namespace kiln
