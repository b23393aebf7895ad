// The outcome of measuring one candidate (a template config on a device), as AutoTVM's
// MeasureResult: the time of each repeat, an error kind, what it cost to find out, when and
// where. Every runner (local, farm) produces this one type and every consumer (records,
// apply-history-best, search) compares results through cost(), the one comparison rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tuner {

// Why a measurement has no usable time (AutoTVM's MeasureErrorNo). Each kind has a short
// name for records and messages (measure_error_name).
enum class MeasureErrorKind : uint8_t {
  Ok,                  // "ok": costs hold the time per call
  InstantiationError,  // "instantiation": the config is invalid for the template
  CompileError,        // "compile": lowering or code generation failed
  CompileTimeout,      // "compile_timeout": building ran past its time limit
  RuntimeError,        // "runtime": the .so did not load, the kernel crashed or returned non-zero
  RunTimeout,          // "run_timeout": running ran past its time limit
  WrongResult,         // "wrong_result": the output differs from the reference
  WorkerLost,          // "worker_lost": the device that took the job disappeared
  Cancelled,           // "cancelled": the tuner gave up on the job before it ran
  InvalidJob,          // "invalid_job": the device could not make sense of the job
};

// Every kind, in declaration order (for summaries that list counts by kind).
const std::vector<MeasureErrorKind>& all_measure_error_kinds();
const char* measure_error_name(MeasureErrorKind kind);
// The kind named `name` (as measure_error_name writes it), or nothing.
std::optional<MeasureErrorKind> measure_error_from_name(std::string_view name);

// The machine that measured (runtime/process/machine.h, as the device reported it) and the
// threads the kernel ran on. Records are keyed to it (tuner/cpu_match.h). An empty model means
// not known: a record written before kiln named the CPU, or a hand-written one.
struct MeasuredOn {
  std::string vendor, model;          // "AuthenticAMD", "AMD EPYC 7B12"
  std::vector<std::string> features;  // the probe's; empty when unknown or emulated
  uint32_t cores = 0;                 // the machine's online CPUs
  uint32_t threads = 0;               // the kernel's thread pool
  std::string kiln;                   // the kiln version that measured
  std::string emulator;               // "qemu-aarch64" when the device emulated the CPU
  bool known() const { return !model.empty(); }
  // A time predicted by `kiln tune --runner analyze` (tuner/predict.h), not measured: vendor
  // "predicted", model "by llvm-mca with the neoverse-n1 model". Such records never compete
  // with measured ones (cpu_match.h).
  bool predicted() const { return vendor == "predicted"; }
  // The CPU class records are grouped by: "AuthenticAMD AMD EPYC 7B12", "qemu-aarch64 on
  // AuthenticAMD AMD EPYC 7B12", or "unknown CPU".
  std::string cpu() const;
};

struct MeasureResult {
  std::vector<double> costs;  // seconds per kernel call, one per repeat
  MeasureErrorKind error = MeasureErrorKind::Ok;
  std::string message;     // why it failed (compiler or runner output); empty when ok
  double all_cost = 0;     // wall seconds spent on this candidate: build, queue and run
  double timestamp = 0;    // unix seconds when the measurement finished
  std::string device_key;  // the farm's device key, or "local"
  MeasuredOn measured_on;  // the machine behind the device key

  // Usable for comparison: no error and at least one time.
  bool ok() const { return error == MeasureErrorKind::Ok && !costs.empty(); }
  // The comparison rule, lower is better: the fastest repeat. Whatever else runs on the
  // device (other tenants of a VM, the other farm worker, a compiler) only ever slows a
  // kernel down, so the fastest repeat is the timing least moved by the machine. On the AVX2
  // VM (bench/timing_noise.py, 26 configs of a conv2d layer, four runs on two layers), a
  // config's repeats pooled from four to six processes disagreed with the next pool's by
  // 0.7-8.7% (5% on average) by their minimum, 7.5-11.5% (9%) by their mean and 3.9-10.4%
  // (8%) by their median; within one process the three are alike (bench/README.md).
  //
  // More repeats find a lower minimum, so trials are compared with trials and
  // re-measurements with re-measurements (settle_records); a candidate on several threads
  // gets more repeats because its timings swing more (tuner/measure/repeats.h). Infinity
  // when the result is not ok, so a failed candidate never beats a working one.
  double cost() const;
  double median_cost() const;  // infinity when there are no costs
  // How much the repeats disagree: (max - min) / median of the costs. 0.05 means the
  // repeats spanned 5% of the typical time. The range over the median rather than the
  // coefficient of variation because one slow outlier (an interrupt, a page fault) is what
  // a user wants to see, and a median is not moved by it. 0 with fewer than two costs.
  double spread() const;
};

}  // namespace kiln::tuner
