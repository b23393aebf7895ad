#include "compiler/codegen/machine_code_analysis.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>

#include "compiler/base/error.h"
#include "compiler/codegen/codegen.h"
#include "compiler/target/profiles.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/run_program.h"
#include "runtime/process/temp_dir.h"

#ifndef KILN_LLVM_MCA
#define KILN_LLVM_MCA "llvm-mca-19"
#endif

namespace kiln::codegen {

namespace {

constexpr int kIterations = 200;

// llvm-mca's summary of one block of code.
struct McaRun {
  std::string cpu;
  double cycles = 0;  // per iteration
  double block_rthroughput = 0;
  double uops_per_cycle = 0;
  int dispatch_width = 0;
  std::vector<std::string> instructions;  // as llvm-mca printed them
  std::vector<std::string> units;
  // usage[i][u]: cycles instruction i keeps unit u busy per iteration.
  std::vector<std::map<int, double>> usage;
};

// A unit's name as the model spells it; a unit of a group has a control character after its
// dot ("A57UnitI.\0"), shown as its number.
std::string unit_name(const std::string& raw) {
  std::string s;
  for (char c : raw) s += (static_cast<unsigned char>(c) < 32) ? char('0' + c) : c;
  return s;
}

McaRun run_mca(const std::vector<std::string>& code, const Target& target) {
  const Target t = llvm_target(target);
  TempDir dir("kiln-mca");
  {
    std::ofstream f(dir.file("block.s"));
    for (const std::string& line : code) f << line << "\n";
  }
  std::vector<std::string> argv = {llvm_mca_program(), "-mtriple=" + t.triple,
                                   "-mcpu=" + scheduling_model_cpu(target),
                                   "-iterations=" + std::to_string(kIterations), "--json"};
  if (!t.features.empty()) argv.push_back("-mattr=" + t.feature_string());
  argv.push_back(dir.file("block.s"));
  ProgramRun r;
  try {
    r = run_program(argv, dir.path());
  } catch (const std::exception& e) {
    user_error() << "machine-code analysis needs LLVM's llvm-mca (Debian package llvm-19; or set "
                    "KILN_LLVM_MCA to its path): "
                 << e.what();
  }
  const std::string out = read_file_bytes_or_empty(dir.file("stdout.txt"));
  user_check(r.status == 0) << "llvm-mca (" << argv[0] << ") failed on the code for " << target.name
                            << " (cpu " << t.cpu
                            << "): " << read_file_bytes_or_empty(dir.file("stderr.txt"));
  nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  internal_check(j.is_object() && j.contains("CodeRegions") && !j["CodeRegions"].empty())
      << "llvm-mca printed no analysis: " << out.substr(0, 400);
  const nlohmann::json& region = j["CodeRegions"][0];
  const nlohmann::json& summary = region["SummaryView"];
  McaRun run;
  run.cpu = j["TargetInfo"].value("CPUName", t.cpu);
  const double iterations = summary.value("Iterations", 1.0);
  run.cycles = summary.value("TotalCycles", 0.0) / iterations;
  run.block_rthroughput = summary.value("BlockRThroughput", 0.0);
  run.uops_per_cycle = summary.value("uOpsPerCycle", 0.0);
  run.dispatch_width = summary.value("DispatchWidth", 0);
  for (const auto& i : region["Instructions"]) run.instructions.push_back(i.get<std::string>());
  for (const auto& u : j["TargetInfo"]["Resources"]) run.units.push_back(unit_name(u));
  run.usage.resize(run.instructions.size() + 1);  // and a row of totals
  for (const auto& p : region["ResourcePressureView"]["ResourcePressureInfo"]) {
    const size_t i = p.value("InstructionIndex", size_t(0));
    if (i < run.usage.size())
      run.usage[i][p.value("ResourceIndex", 0)] += p.value("ResourceUsage", 0.0);
  }
  return run;
}

// A block of independent copies of `example`: its destination register renumbered per copy,
// its sources fixed registers no copy writes, a memory source replaced by a register. What
// the core sustains on this block is its peak for the instruction class.
std::vector<std::string> peak_block(const std::string& example, bool aarch64) {
  std::vector<std::string> block;
  if (aarch64) {
    // "fmla v3.4s, v10.4s, v9.s[0]" -> "fmla v{i}.4s, v30.4s, v31.s[0]"; a scalar
    // "fmadd s0, s1, s2, s0" keeps its accumulator its own.
    static const std::regex reg("\\b([vqdsh])([0-9]+)\\b");
    std::smatch m;
    std::string dest;
    if (std::regex_search(example, m, reg)) dest = m[0];
    // A 16-bit lane ("v9.h[3]") comes only from v0-v15: the sources are v14 and v15 there,
    // and the copies' destinations skip them.
    const bool low_sources = example.find(".h[") != std::string::npos;
    for (int copy = 0; copy < 24; ++copy) {
      const int i = low_sources && copy >= 14 ? copy + 2 : copy;
      std::string out;
      int source = low_sources ? 14 : 30;
      auto begin = std::sregex_iterator(example.begin(), example.end(), reg);
      size_t last = 0;
      bool first = true;
      for (auto it = begin; it != std::sregex_iterator(); ++it, first = false) {
        out += example.substr(last, it->position() - last);
        const std::string kind = (*it)[1];
        out += kind + std::to_string(first || (*it)[0] == dest
                                         ? i
                                         : std::min(source++, low_sources ? 15 : 31));
        last = it->position() + it->length();
      }
      block.push_back(out + example.substr(last));
    }
    return block;
  }
  // AT&T: the destination is the last operand; %tmm tiles are 8, vector registers 16 (32
  // with AVX-512, but 14 copies already cover any FMA latency).
  static const std::regex reg("%(xmm|ymm|zmm|tmm)([0-9]+)");
  static const std::regex mem("[-0-9a-z_.]*\\([^)]*\\)(\\{1to[0-9]+\\})?");
  std::smatch m;
  std::string kind = "ymm";
  if (std::regex_search(example, m, reg)) kind = m[1];
  const int copies = kind == "tmm" ? 6 : 14;
  const std::string src = kind == "tmm" ? "%tmm6" : "%" + kind + "14";
  const std::string src2 = kind == "tmm" ? "%tmm7" : "%" + kind + "15";
  std::string registers_only = std::regex_replace(example, mem, src2);
  for (int i = 0; i < copies; ++i) {
    std::string out, rest = registers_only;
    // Every register but the last operand becomes a source; the last, copy i's own.
    std::vector<std::pair<size_t, size_t>> at;
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), reg);
         it != std::sregex_iterator(); ++it)
      at.push_back({size_t(it->position()), size_t(it->length())});
    size_t last = 0;
    for (size_t k = 0; k < at.size(); ++k) {
      out += rest.substr(last, at[k].first - last);
      out += k + 1 == at.size() ? "%" + kind + std::to_string(i) : (k % 2 ? src2 : src);
      last = at[k].first + at[k].second;
    }
    block.push_back(out + rest.substr(last));
  }
  return block;
}

std::string fixed(double v, int digits = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// What limits the loop: waiting on results, the dispatch width, or its busiest unit.
std::string limit_of(const LoopPrediction& p, const McaRun& run, bool aarch64) {
  if (p.cycles > 1.25 * p.resource_bound)
    return "dependency chains: " + fixed(p.cycles) +
           " cycles per iteration where the busiest unit needs " + fixed(p.resource_bound) +
           " (instructions wait on results: more independent accumulators would hide the latency)";
  if (p.dispatch_width > 0 && p.uops_per_cycle >= 0.95 * p.dispatch_width)
    return "dispatch: " + fixed(p.uops_per_cycle, 2) +
           " micro-ops per cycle, the core's width of " + std::to_string(p.dispatch_width) +
           " (fewer instructions per MAC: a larger register tile)";
  if (p.units.empty()) return "no unit is busy";
  // The busiest unit, and which instructions keep it busy.
  const std::string busiest = p.units.front().first;
  int unit = -1;
  for (size_t u = 0; u < run.units.size(); ++u)
    if (run.units[u] == busiest) unit = int(u);
  double mac = 0, load = 0, store = 0, other = 0;
  for (size_t i = 0; i + 1 < run.usage.size() && unit >= 0; ++i) {
    auto it = run.usage[i].find(unit);
    if (it == run.usage[i].end()) continue;
    switch (role_of(run.instructions[i], aarch64)) {
      case InstructionRole::Mac:
        mac += it->second;
        break;
      case InstructionRole::Load:
        load += it->second;
        break;
      case InstructionRole::Store:
        store += it->second;
        break;
      case InstructionRole::Other:
        other += it->second;
        break;
    }
  }
  const double busy = p.units.front().second;
  std::string by;
  std::vector<std::pair<double, std::string>> parts = {{mac, "multiply-accumulates"},
                                                       {load, "loads"},
                                                       {store, "stores"},
                                                       {other, "other instructions"}};
  std::sort(parts.begin(), parts.end(), std::greater<>());
  for (const auto& [v, what] : parts)
    if (v > 0.05 * busy) by += (by.empty() ? "" : ", ") + what + " " + fixed(v);
  const std::string head = parts.front().second == "multiply-accumulates" ? "compute: " : "unit: ";
  return head + busiest + " busy " + fixed(busy) + " of " + fixed(p.cycles) +
         " cycles per iteration (" + by + ")";
}

// What holds the loop back: register spills first when there are any (they add loads, stores
// and chains, and a reader fixes them first), then what limits it.
std::string bottleneck_of(const LoopPrediction& p, const McaRun& run, bool aarch64) {
  const AsmLoop& l = p.loop;
  std::string spills;
  if (l.spill_loads + l.spill_stores > 0)
    spills = "register spills: " + std::to_string(l.spill_loads) + " reloads and " +
             std::to_string(l.spill_stores) +
             " spills per iteration (the loop's live values do not fit the registers); then ";
  return spills + limit_of(p, run, aarch64);
}

}  // namespace

void check_llvm_mca(const Target& target) {
  run_mca({target.is_aarch64() ? "add x0, x0, #1" : "addq $1, %rax"}, target);
}

std::string scheduling_model_cpu(const Target& target) {
  const CpuProfile* p = find_cpu_profile(target.name);
  if (p && !p->model_cpu.empty()) return p->model_cpu;
  return llvm_target(target).cpu;
}

std::string llvm_mca_program() {
  if (const char* env = std::getenv("KILN_LLVM_MCA"); env && *env) return env;
  return KILN_LLVM_MCA;
}

double LoopPrediction::of_peak() const {
  return peak_macs_per_cycle > 0 ? macs_per_cycle() / peak_macs_per_cycle : 0;
}

double peak_macs_per_cycle(const std::string& example, const Target& target) {
  const bool aarch64 = target.is_aarch64();
  const MacKind kind = mac_kind_of(example, aarch64);
  if (kind.name.empty()) return 0;
  // The same class on the same model is asked for once per process.
  static std::mutex mu;
  static std::map<std::string, double> cache;
  const Target t = llvm_target(target);
  const std::string key =
      t.triple + "|" + scheduling_model_cpu(target) + "|" + t.feature_string() + "|" + kind.name;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::vector<std::string> block = peak_block(example, aarch64);
  double peak = 0;
  try {
    McaRun run = run_mca(block, target);
    if (run.cycles > 0) peak = kind.macs * double(block.size()) / run.cycles;
  } catch (const UserError&) {
    peak = 0;  // the model cannot time this class (AMX tiles on most models)
  }
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = peak;
  return peak;
}

MachineCodeAnalysis analyze_assembly(const std::string& assembly, const Target& target,
                                     size_t max_loops) {
  const bool aarch64 = target.is_aarch64();
  std::vector<AsmLoop> loops = innermost_loops(assembly, aarch64);
  user_check(!loops.empty()) << "the kernel has no loop to analyse (every loop was unrolled)";
  if (loops.size() > max_loops) loops.resize(max_loops);
  MachineCodeAnalysis a;
  for (AsmLoop& loop : loops) {
    McaRun run = run_mca(loop.instructions, target);
    a.cpu = run.cpu;
    LoopPrediction p;
    p.cycles = run.cycles;
    p.resource_bound = run.block_rthroughput;
    p.uops_per_cycle = run.uops_per_cycle;
    p.dispatch_width = run.dispatch_width;
    // The last row of the pressure table is the iteration's total per unit.
    if (!run.usage.empty())
      for (const auto& [u, cycles] : run.usage.back())
        if (u < int(run.units.size()) && cycles > 0) p.units.push_back({run.units[u], cycles});
    std::stable_sort(p.units.begin(), p.units.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    if (!loop.mac_example.empty())
      p.peak_macs_per_cycle = peak_macs_per_cycle(loop.mac_example, target);
    p.loop = std::move(loop);
    p.bottleneck = bottleneck_of(p, run, aarch64);
    a.loops.push_back(std::move(p));
  }
  return a;
}

}  // namespace kiln::codegen
