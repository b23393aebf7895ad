// `kiln targets`: every name --target takes, what it means and whether this machine runs it.
// Presets and "host" first, then CPUs and boards by name (compiler/target/profiles.h).
#include <cstdio>
#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/target/profiles.h"
#include "compiler/target/target.h"
#include "tools/subcommands.h"

namespace kiln::tools {

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : separator) + i;
  return s;
}

const char* arch_of(const Target& t) {
  return t.is_x86() ? "x86-64" : t.is_aarch64() ? "aarch64" : "?";
}

// One target: its line and, indented, what it enables and how to run it.
void print_target(const Target& t, const std::string& describes, const std::string& also,
                  const std::string& note) {
  std::printf("  %-16s %-8s %-4s %s%s\n", t.name.c_str(), arch_of(t), host_can_run(t) ? "yes" : "-",
              describes.c_str(), also.c_str());
  std::printf("  %-16s   LLVM CPU %s, %d-bit vectors, L1d %d KiB, L2 %d KiB, features %s\n", "",
              t.cpu.c_str(), t.vector_bits, t.l1d_kib, t.l2_kib, t.feature_string().c_str());
  if (!note.empty()) std::printf("  %-16s   %s\n", "", note.c_str());
}

// The profile to tune this machine as: the one LLVM's name for this CPU names, else the one
// this machine runs that enables the most features (nullptr when it runs none).
const CpuProfile* closest_profile(const std::string& host_cpu) {
  const CpuProfile* best = nullptr;
  for (const CpuProfile& p : cpu_profiles()) {
    if (!host_can_run(p.target)) continue;
    if (p.target.cpu == host_cpu) return &p;
    if (!best || p.target.features.size() > best->target.features.size()) best = &p;
  }
  return best;
}

int run_targets() {
  std::printf("presets (the 'runs here' column: this machine can run what they build)\n");
  std::printf("  %-16s %-8s %-4s %s\n", "name", "arch", "here", "");
  for (const std::string& name : target_preset_names()) {
    if (name == "host") continue;
    print_target(target_from_name(name), "", "", "");
  }
  print_target(host_target(), "this machine, as its CPU probe reads it", "", "");
  const std::string host_cpu = codegen::llvm_target(host_target()).cpu;
  const CpuProfile* closest = closest_profile(host_cpu);
  std::printf("  %-16s   LLVM names this CPU %s; closest profile: %s\n", "", host_cpu.c_str(),
              closest ? closest->name.c_str() : "none (no profile runs here)");
  std::printf("\nCPUs and boards (the same features on every build machine)\n");
  for (const CpuProfile& p : cpu_profiles()) {
    std::string also = p.aliases.empty() ? "" : " (also: " + joined(p.aliases, ", ") + ")";
    char clock[32];
    std::snprintf(clock, sizeof clock, "%.1f GHz", p.ghz);
    print_target(p.target, p.describes, also, p.note.empty() ? clock : clock + ("; " + p.note));
  }
  return 0;
}

}  // namespace

Run add_targets(CLI::App& app) {
  app.add_subcommand("targets", "List every --target name: presets, CPUs and boards");
  return run_targets;
}

}  // namespace kiln::tools
