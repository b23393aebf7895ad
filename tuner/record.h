// One tuning record: what was measured (target, template, workload, config) and how it went
// (a MeasureResult), as AutoTVM's (MeasureInput, MeasureResult) pair; and its text form, one
// JSON object per line of a log (format version 2):
//
//   {"v":2,
//    "target":{"name":"x86-avx2","triple":"x86_64-unknown-linux-gnu","cpu":"haswell",
//              "features":["+avx2","+fma","+f16c"],"vector_bits":256},
//    "task":{"template":"dense.packed",
//            "workload":{"op":"dense","params":{"K":64,"M":64,"N":64},"dtype":"f32",
//                        "epilogue":["bias","relu"]}},
//    "config":{"kc":64,"mr":4,"nr":16},
//    "result":{"costs":[1.2e-05,1.1e-05],"error":"ok","message":"","all_cost":0.41,
//              "timestamp":1795000000.5,"device":"local",
//              "machine":{"vendor":"AuthenticAMD","model":"AMD EPYC 7B12",
//                         "features":["avx","avx2","fma",...],"cores":2,"threads":1,
//                         "kiln":"0.45.0"}},
//    "flops":524288}
//
// Required: v, target (all five fields), task (template; workload op, params, dtype,
// epilogue), config, result.costs, result.error, flops. result.message, all_cost, timestamp
// and device default to empty/0 when absent, so hand-written logs stay short. The flops
// let `kiln records` show GFLOPS without building the template. result.machine names the CPU
// that measured (measure_result.h's MeasuredOn; "emulator" when it ran under one): absent in
// logs written before kiln 0.45, whose CPU is unknown (tuner/cpu_match.h).
//
// This file only translates between text and the struct (no registry, no files): it is what
// the fuzzer exercises. Checking a record against the operator library is records.h's job.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "schedules/config.h"
#include "schedules/op_template.h"
#include "compiler/target/target.h"
#include "tuner/measure_result.h"

namespace kiln::tuner {

// Version 2 keeps workload parameters in their type: integers, reals ("lo":-0.25; "inf" and
// "-inf" as strings, which JSON lacks). Version 1 wrote reals in fixed point with the unit in
// the name ("lo_milli":-250); such lines are converted on reading (record.cpp,
// from_fixed_point), so old logs keep loading and keying the same workloads.
inline constexpr int kRecordFormatVersion = 2;

struct TuningRecord {
  Target target;
  std::string template_name;  // e.g. "dense.packed"
  schedules::Workload workload;
  schedules::Config config;
  MeasureResult result;
  double flops = 0;  // floating-point operations of one kernel call

  // flops / cost() (the fastest repeat), in GFLOPS; 0 when the result is not ok.
  double gflops() const;
};

// The record as one line of JSON, without the newline. Text that is not valid UTF-8 (a
// compiler message, say) is written with U+FFFD in place of the bad bytes.
std::string record_to_json(const TuningRecord& r);

struct ParsedRecord {
  std::optional<TuningRecord> record;
  std::string error;  // why the line is not a record, e.g. "missing field 'task.template'"
};
// Never throws: anything that is not a record of version 1 or 2 comes back with `error` set.
ParsedRecord parse_record(std::string_view line);

// A canonical description of a target: the same string exactly when two targets generate
// the same code (name, triple, cpu, vector width and the feature set, in any order).
std::string target_key(const Target& t);

}  // namespace kiln::tuner
