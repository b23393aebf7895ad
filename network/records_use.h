// What `kiln compile --records` made of the logs it was given, in a few lines: how many
// records it read, how many were for this target and for a workload of this model, and why
// the rest were not used. A log of another target, a file of random bytes or a log of another
// model otherwise compiles silently as untuned, and the user never learns why.
#pragma once

#include <string>

#include "network/network_program.h"
#include "compiler/target/target.h"
#include "tuner/records.h"

namespace kiln::network {

// Lines ending in '\n'; a "warning:" line when no record was usable.
std::string describe_records_use(const tuner::LoadedRecords& loaded, const Target& target,
                                 const NetworkProgram& program);

}  // namespace kiln::network
