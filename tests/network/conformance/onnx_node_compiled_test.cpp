// ONNX conformance through the compiled path: every node test of Debian's libonnx-testdata
// whose operators the network compiler claims is compiled by compile_network (what
// `kiln compile` runs) into model.so + model.params and run by the runtime, and its outputs
// are compared with the test's expected ones. Host: the models run in this process. ARM:
// compiled for arm-neon, then all run under one qemu start by the cross-built
// model_batch_runner. Each prints the counts and the skipped cases with their reasons.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "compiler/base/error.h"
#include "network/compile_network.h"
#include "kiln/model.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/temp_dir.h"
#include "tests/network/conformance/node_cases.h"
#include "tests/network/conformance/tally.h"

namespace kiln::network::conformance {
namespace {

namespace fs = std::filesystem;

// Compiles `run` for `target` into `dir`/out; a refusal (UserError) or a compiler bug
// (anything else) as an outcome, Passed when the model was written.
Outcome compile_run(const DataSetRun& run, const std::string& target, const std::string& dir) {
  const std::string onnx = dir + "/model.onnx";
  std::ofstream(onnx, std::ios::binary) << run.model_bytes;
  try {
    compile_network({onnx, target_from_name(target), {}, run.shapes, dir + "/out"});
  } catch (const UserError& e) {
    // The message without the temporary file's path, which differs from run to run.
    std::string why = e.what();
    if (why.rfind(onnx + ": ", 0) == 0) why = why.substr(onnx.size() + 2);
    return Outcome::refused(why);
  } catch (const std::exception& e) {
    return Outcome::failed(std::string("compile: ") + e.what());
  }
  return Outcome::passed();
}

// "" when every output (raw bytes from `output(k)`) matches.
template <typename OutputBytes>
std::string compare_outputs(const DataSetRun& run, const std::vector<std::string>& dtypes,
                            OutputBytes output) {
  for (size_t k = 0; k < run.expected.size(); ++k) {
    std::string diff = compare_output(output(k), dtypes[k], run.expected[k], run.rtol);
    if (!diff.empty()) return run.set_name + " output " + std::to_string(k) + ": " + diff;
  }
  return "";
}

Outcome run_on_host(const DataSetRun& run) {
  TempDir dir("kiln-conformance");
  Outcome compiled = compile_run(run, "host", dir.path());
  if (compiled.kind != Outcome::Kind::Passed) return compiled;
  try {
    const std::string out = dir.path() + "/out";
    Model m = Model::load(out + "/model.so", out + "/model.params", 1);
    std::vector<const void*> ins;
    for (const graph::HostTensor& t : run.inputs) ins.push_back(t.raw());
    std::vector<std::vector<std::byte>> outs;
    std::vector<void*> out_ptrs;
    std::vector<std::string> dtypes;
    for (const TensorInfo& t : m.outputs()) {
      outs.emplace_back(std::max<uint64_t>(t.bytes, 1));
      out_ptrs.push_back(outs.back().data());
      dtypes.push_back(t.dtype);
    }
    m.run(std::span<const void* const>(ins), std::span<void* const>(out_ptrs));
    std::string diff = compare_outputs(run, dtypes, [&](size_t k) { return outs[k].data(); });
    return diff.empty() ? Outcome::passed() : Outcome::failed(diff);
  } catch (const std::exception& e) {
    return Outcome::failed(std::string("run: ") + e.what());
  }
}

// The first outcome that is not a pass over the case's data sets.
template <typename RunOne>
Outcome run_case(const NodeCase& c, int& frozen, RunOne run_one) {
  try {
    for (const DataSetRun& run : data_set_runs(c)) {
      frozen = std::max(frozen, run.frozen);
      Outcome o = run_one(run);
      if (o.kind != Outcome::Kind::Passed) return o;
    }
  } catch (const UserError& e) {
    return Outcome::refused(e.what());  // kiln's ONNX reader refuses the test's data
  } catch (const std::exception& e) {
    return Outcome::failed(std::string("reading the test: ") + e.what());
  }
  return Outcome::passed();
}

TEST(OnnxNodeCompiled, Host) {
  const fs::path root = node_tests_root();
  if (root.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  int total = 0;
  const std::vector<NodeCase> cases = claimed_node_cases(root, total);
  Tally tally("onnx node tests compiled for host");
  for (const NodeCase& c : cases) {
    int frozen = 0;
    const Outcome outcome = run_case(c, frozen, run_on_host);
    tally.record(c.name, outcome, frozen);
  }
  for (const std::string& f : tally.finish(total, static_cast<int>(cases.size()))) ADD_FAILURE() << f;
}

// One compiled data set waiting for its run under qemu.
struct PendingArm {
  DataSetRun run;
  std::string dir;
};

TEST(OnnxNodeCompiled, ArmNeonUnderQemu) {
  const fs::path root = node_tests_root();
  if (root.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || !fs::exists(KILN_MODEL_BATCH_RUNNER_AARCH64))
    GTEST_SKIP() << "qemu-aarch64 or the cross-built model_batch_runner is missing";
  int total = 0;
  const std::vector<NodeCase> cases = claimed_node_cases(root, total);
  TempDir work("kiln-conformance-arm");
  std::map<std::string, Outcome> outcomes;  // compile-time outcomes; passes are filled later
  std::map<std::string, int> frozen;
  std::vector<PendingArm> pending;
  std::ofstream manifest(work.file("manifest"));
  for (const NodeCase& c : cases) {
    outcomes[c.name] = run_case(c, frozen[c.name], [&](const DataSetRun& run) {
      const std::string dir = work.file(std::to_string(pending.size()));
      fs::create_directories(dir);
      Outcome o = compile_run(run, "arm-neon", dir);
      if (o.kind != Outcome::Kind::Passed) return o;
      manifest << dir << "/out " << dir << "/y";
      for (size_t i = 0; i < run.inputs.size(); ++i) {
        const std::string file = dir + "/x" + std::to_string(i);
        std::ofstream(file, std::ios::binary)
            .write(reinterpret_cast<const char*>(run.inputs[i].raw()),
                   static_cast<std::streamsize>(run.inputs[i].nbytes()));
        manifest << " " << file;
      }
      manifest << "\n";
      pending.push_back({run, dir});
      return o;
    });
  }
  manifest.close();
  std::string cmd;
  for (const std::string& a : qemu) cmd += a + " ";
  cmd += std::string(KILN_MODEL_BATCH_RUNNER_AARCH64) + " " + work.file("manifest") + " > " +
         work.file("results");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::map<std::string, std::string> results;  // model dir -> "ok" or the error
  std::ifstream in(work.file("results"));
  for (std::string status, dir, rest; in >> status >> dir && std::getline(in, rest);)
    results[dir.substr(0, dir.find(':'))] = status == "ok" ? "" : rest;
  for (const PendingArm& p : pending) {
    Outcome& o = outcomes[p.run.case_name];
    if (o.kind != Outcome::Kind::Passed) continue;
    auto r = results.find(p.dir + "/out");
    if (r == results.end() || !r->second.empty()) {
      o = Outcome::failed("run under qemu: " + (r == results.end() ? "no result" : r->second));
      continue;
    }
    std::vector<std::string> dtypes;
    std::vector<std::vector<char>> bytes;
    for (size_t k = 0; k < p.run.expected.size(); ++k) {
      std::ifstream f(p.dir + "/y." + std::to_string(k), std::ios::binary);
      bytes.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      bytes.back().resize(std::max<size_t>(p.run.expected[k].nbytes(), 1));
      dtypes.push_back(p.run.expected[k].dtype().str());
    }
    std::string diff = compare_outputs(p.run, dtypes, [&](size_t k) { return bytes[k].data(); });
    if (!diff.empty()) o = Outcome::failed(diff);
  }
  Tally tally("onnx node tests compiled for arm-neon, run under qemu");
  for (const NodeCase& c : cases) tally.record(c.name, outcomes[c.name], frozen[c.name]);
  for (const std::string& f : tally.finish(total, static_cast<int>(cases.size()))) ADD_FAILURE() << f;
}

}  // namespace
}  // namespace kiln::network::conformance
