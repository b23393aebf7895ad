#include "tuner/embedded_farm.h"

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "compiler/base/error.h"
#include "runtime/process/kernel_exec.h"
#include "tuner/measure/farm_runner.h"

#ifndef KILN_DEFAULT_AARCH64_WORKER
#define KILN_DEFAULT_AARCH64_WORKER ""
#endif

namespace kiln::tuner {
namespace {

const char* const kBuilderKey = "builder";

std::string self_executable() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  internal_check(!ec) << "cannot find this program's path: " << ec.message();
  return self.string();
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

EmbeddedFarm::EmbeddedFarm(const Target& target, int workers, int builders)
    : key_(target.name), builders_(builders) {
  const int n = workers > 0 ? workers : std::max(1u, std::thread::hardware_concurrency());
  const std::string kiln = self_executable();
  std::vector<std::string> worker;
  std::vector<std::string> extra;
  if (host_can_run(target)) {
    worker = {kiln, "worker"};
    description_ = "an embedded farm of " + std::to_string(n) + " native worker" + (n > 1 ? "s" : "");
  } else {
    std::vector<std::string> qemu = aarch64_qemu_prefix();
    const std::string arm_worker = KILN_DEFAULT_AARCH64_WORKER;
    user_check(target.is_aarch64() && !qemu.empty() && !arm_worker.empty() &&
               access(arm_worker.c_str(), X_OK) == 0)
        << "this machine cannot run " << target.name
        << " code: tune it on a farm of such boards (--farm HOST:PORT --key KEY)"
        << (target.is_aarch64() ? ", or install qemu-user and the AArch64 kiln-worker" : "");
    worker = qemu;
    worker.push_back(arm_worker);
    extra = {"--sandbox-prefix", join(qemu)};
    description_ = "an embedded farm of " + std::to_string(n) + " AArch64 worker" +
                   (n > 1 ? "s" : "") + " under qemu";
  }
  farm_ = std::make_unique<farm::LocalFarm>(std::vector<std::string>{kiln, "tracker"});
  for (int i = 0; i < n; ++i) farm_->start_worker(worker, key_, extra);
  for (int i = 0; i < builders; ++i)
    farm_->start_worker({kiln, "worker", "--role", "builder"}, kBuilderKey, {});
  farm_->wait_for_workers(key_, n, 60);
  if (builders > 0) {
    farm_->wait_for_workers(kBuilderKey, builders, 60);
    description_ += " and " + std::to_string(builders) + " builder" + (builders > 1 ? "s" : "");
  }
}

std::shared_ptr<FarmBuilders> EmbeddedFarm::builders() const {
  if (builders_ == 0) return nullptr;
  return std::make_shared<FarmBuilders>(farm_->address(), farm_->token(), kBuilderKey);
}

std::unique_ptr<Runner> EmbeddedFarm::runner() const {
  return std::make_unique<FarmRunner>(farm_->address(), farm_->token(), key_);
}

std::string EmbeddedFarm::description() const {
  return description_;
}

}  // namespace kiln::tuner
