// The farm `kiln tune` starts when the user gives none: a tracker and workers for the
// target on loopback, as child processes of this kiln (native workers for a target this CPU
// runs, AArch64 workers under qemu-aarch64 for ARM targets), stopped with the object.
#pragma once

#include <memory>
#include <string>

#include "rpc/farm/local_farm.h"
#include "compiler/target/target.h"
#include "tuner/measure/farm_builders.h"
#include "tuner/measure/runner.h"

namespace kiln::tuner {

class EmbeddedFarm {
 public:
  // `workers` 0: one per core. UserError when this machine cannot run the target at all.
  // `builders`: also that many builder workers (kiln worker --role builder) under the key
  // "builder".
  EmbeddedFarm(const Target& target, int workers, int builders = 0);
  // A runner submitting to this farm under the target's key.
  std::unique_ptr<Runner> runner() const;
  // The farm's builders (null without any).
  std::shared_ptr<FarmBuilders> builders() const;
  std::string description() const;  // "an embedded farm of 2 native workers"
  const farm::LocalFarm& farm() const { return *farm_; }

 private:
  std::unique_ptr<farm::LocalFarm> farm_;
  std::string key_, description_;
  int builders_ = 0;
};

}  // namespace kiln::tuner
