// The runner that measures on a farm's boards: a batch goes to a tracker (or a direct-mode
// worker) for one device key, in as many Submits as its bytes need, and results stream back
// as the boards finish them. The only place above the farm that speaks its wire format.
#pragma once

#include <string>

#include "rpc/farm/client.h"
#include "tuner/measure/runner.h"

namespace kiln::tuner {

class FarmRunner : public Runner {
 public:
  // The most job bytes one Submit carries (below the farm's 64 MiB message limit).
  static constexpr size_t kSubmitBytes = 48u << 20;
  FarmRunner(std::string address, std::string token, std::string key, std::string tls_ca = "");
  std::vector<RunResult> run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                             const std::atomic<bool>& stop) override;
  std::string device() const override { return key_; }

 private:
  farm::FarmClient client_;
  std::string key_;
};

}  // namespace kiln::tuner
