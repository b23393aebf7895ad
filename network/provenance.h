// Where a compiled model's tuned kernels came from, for model.json: each tuning log given (its
// file name and a checksum of its bytes) and, per tuned kernel, the checksum of the record it
// was built from, so a deployed artifact can be traced to its measurements. Checksums are
// kiln's FNV-1a 64 (kiln/params.h) as 16 hex digits; only file names are written (never a
// folder), so the same logs give the same model.json wherever they lie.
#pragma once

#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "network/network_program.h"
#include "tuner/record.h"

namespace kiln::network {

struct LogDigest {
  std::string file;      // the log's file name
  std::string checksum;  // of its bytes
};
struct KernelRecord {
  std::string kernel;    // the function in model.so
  std::string checksum;  // of the record's JSON line (tuner/record.h: record_to_json)
};
struct RecordsProvenance {
  std::vector<LogDigest> logs;
  std::vector<KernelRecord> kernels;  // the tuned kernels, in the program's task order
};

// The logs `paths` and, for each tuned task of `program`, the fastest ok record among
// `records` of its template, workload, config and target.
RecordsProvenance records_provenance(const std::vector<std::string>& paths,
                                     const std::vector<tuner::TuningRecord>& records,
                                     const Target& target, const NetworkProgram& program);

}  // namespace kiln::network
