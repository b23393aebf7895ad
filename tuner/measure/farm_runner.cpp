#include "tuner/measure/farm_runner.h"

#include "tuner/measure/cancel_on_stop.h"
#include "tuner/measure/farm_wire.h"

namespace kiln::tuner {

FarmRunner::FarmRunner(std::string address, std::string token, std::string key, std::string tls_ca)
    : client_(std::move(address), std::move(token), std::move(tls_ca)), key_(std::move(key)) {}

std::vector<RunResult> FarmRunner::run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                                       const std::atomic<bool>& stop) {
  const size_t n = inputs.size();
  std::vector<RunResult> results(n);
  // Jobs carry their kernel and input bytes, so a batch of large tasks can exceed one gRPC
  // message: submit it as several batches, each under kSubmitBytes, all before reading any
  // result so the workers stay busy. A job too big on its own fails alone.
  std::vector<std::unique_ptr<farm::Batch>> batches;
  std::vector<std::vector<size_t>> members;  // batch -> indices of its jobs in `inputs`
  std::vector<farm::pb::Job> chunk;
  std::vector<size_t> chunk_members;
  size_t chunk_bytes = 0;
  auto flush = [&] {
    if (chunk.empty()) return;
    batches.push_back(client_.submit(key_, std::move(chunk)));
    members.push_back(std::move(chunk_members));
    chunk.clear();
    chunk_members.clear();
    chunk_bytes = 0;
  };
  for (size_t i = 0; i < n; ++i) {
    farm::pb::Job job = to_farm_job(inputs[i]);
    inputs[i] = {};  // its bytes now live in the job
    const size_t bytes = job.ByteSizeLong();
    if (bytes > kSubmitBytes) {
      results[i].error = MeasureErrorKind::InvalidJob;
      results[i].message = "the job is " + std::to_string(bytes >> 20) +
                           " MiB, more than one farm message carries (" +
                           std::to_string(kSubmitBytes >> 20) + " MiB)";
      if (on_result) on_result(i, results[i]);
      continue;
    }
    if (chunk_bytes + bytes > kSubmitBytes) flush();
    chunk_bytes += bytes;
    chunk.push_back(std::move(job));
    chunk_members.push_back(i);
  }
  flush();
  // `stop` cancels every batch; their results still stream back.
  std::vector<farm::Batch*> submitted;
  for (auto& b : batches) submitted.push_back(b.get());
  const CancelOnStop cancel(std::move(submitted), stop);
  for (size_t b = 0; b < batches.size(); ++b) {
    farm::pb::Result r;
    while (batches[b]->next(&r)) {
      if (r.index() >= members[b].size()) continue;
      const size_t i = members[b][r.index()];
      results[i] = from_farm_result(r);
      if (on_result) on_result(i, results[i]);
    }
  }
  return results;
}

}  // namespace kiln::tuner
