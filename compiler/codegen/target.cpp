#include "codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cctype>

#include "ir/error.h"

namespace kiln::codegen {
namespace {

constexpr const char* kX86Triple = "x86_64-unknown-linux-gnu";
constexpr const char* kAArch64Triple = "aarch64-unknown-linux-gnu";

std::string_view strip_plus(std::string_view f) {
  return !f.empty() && (f[0] == '+' || f[0] == '-') ? f.substr(1) : f;
}

bool process_is_x86() {
  return llvm::Triple(llvm::sys::getProcessTriple()).isX86();
}
bool process_is_aarch64() {
  return llvm::Triple(llvm::sys::getProcessTriple()).isAArch64();
}

// The host's features that are switched on, without the "+".
std::vector<std::string> host_features_on() {
  std::vector<std::string> on;
  for (const auto& f : llvm::sys::getHostCPUFeatures())
    if (f.getValue()) on.push_back(f.getKey().str());
  return on;
}

bool host_has(std::string_view feature) {
  auto map = llvm::sys::getHostCPUFeatures();
  auto it = map.find(strip_plus(feature));
  return it != map.end() && it->getValue();
}

Target x86_avx2() {
  return {"x86-avx2", kX86Triple, "haswell", {"+avx2", "+fma", "+f16c"}, 256};
}

Target x86_avx512() {
  Target t{"x86-avx512",
           kX86Triple,
           "skylake-avx512",
           {"+avx512f", "+avx512bw", "+avx512vl", "+avx512dq", "+fma", "+f16c"},
           512};
  // bf16 dot products only where the build machine has them: the preset then describes
  // the machine kiln is tuned on (a model tuned elsewhere uses an explicit target).
  if (process_is_x86() && host_has("avx512bf16")) t.features.push_back("+avx512bf16");
  return t;
}

Target arm(const char* name, std::vector<std::string> features) {
  return {name, kAArch64Triple, "generic", std::move(features), 128};
}

}  // namespace

bool Target::has(std::string_view feature) const {
  std::string_view want = strip_plus(feature);
  for (const auto& f : features)
    if (f.size() == want.size() + 1 && f[0] == '+' && std::string_view(f).substr(1) == want)
      return true;
  return false;
}

bool Target::is_x86() const {
  return llvm::Triple(triple).isX86();
}
bool Target::is_aarch64() const {
  return llvm::Triple(triple).isAArch64();
}

int Target::lanes(ir::DataType t) const {
  return std::max(1, vector_bits / t.bits);
}

std::string Target::feature_string() const {
  std::string s;
  for (const auto& f : features) s += (s.empty() ? "" : ",") + f;
  return s;
}

std::vector<std::string> target_preset_names() {
  return {"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16", "arm-bf16", "host"};
}

Target host_target() {
  Target t;
  t.name = "host";
  llvm::Triple process(llvm::sys::getProcessTriple());
  t.triple = process.isX86() ? kX86Triple : process.isAArch64() ? kAArch64Triple : process.str();
  t.cpu = llvm::sys::getHostCPUName().str();
  // Both the enabled and the disabled features: the CPU name alone would switch on
  // features a virtual machine may hide from us.
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    std::string entry(1, f.getValue() ? '+' : '-');
    entry += f.getKey();
    t.features.push_back(std::move(entry));
  }
  std::sort(t.features.begin(), t.features.end());
  if (t.has("avx512f")) {
    t.vector_bits = 512;
  } else if (t.has("avx2")) {
    t.vector_bits = 256;
  } else {
    t.vector_bits = 128;
  }
  return t;
}

Target target_from_name(const std::string& name) {
  if (name == "x86-avx2") return x86_avx2();
  if (name == "x86-avx512") return x86_avx512();
  if (name == "arm-neon") return arm("arm-neon", {"+neon"});
  if (name == "arm-fp16") return arm("arm-fp16", {"+v8.2a", "+neon", "+fullfp16"});
  if (name == "arm-bf16")
    return arm("arm-bf16", {"+v8.6a", "+neon", "+fullfp16", "+bf16", "+i8mm", "+dotprod"});
  if (name == "host") return host_target();
  std::string valid;
  for (const auto& n : target_preset_names()) valid += (valid.empty() ? "" : ", ") + n;
  user_error() << "unknown target '" << name << "'; valid targets: " << valid;
  return {};
}

bool host_can_run(const Target& t) {
  if (!(t.is_x86() && process_is_x86()) && !(t.is_aarch64() && process_is_aarch64())) return false;
  auto on = host_features_on();
  for (const auto& f : t.features) {
    if (f.empty() || f[0] != '+') continue;
    std::string_view want = strip_plus(f);
    // Architecture-version features ("v8.2a") are not reported by the host probe.
    if (t.is_aarch64() && want.size() > 1 && want[0] == 'v' && isdigit(want[1])) continue;
    if (std::find(on.begin(), on.end(), want) == on.end()) return false;
  }
  return true;
}

}  // namespace kiln::codegen
