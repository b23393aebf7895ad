#include "compiler/codegen/asm_loops.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace kiln::codegen {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Where a line's comment starts: "//" in AArch64 listings, "#" in AT&T ones (where AArch64
// uses "#" for immediates); npos when it has none.
size_t comment_at(const std::string& line, bool aarch64) {
  return line.find(aarch64 ? "//" : "#");
}

// One instruction line split into its mnemonic and operands (commas inside parentheses and
// brackets do not split: "(%rax,%rcx,4)", "[x0, #16]").
struct Instruction {
  std::string mnemonic;
  std::vector<std::string> operands;
};

Instruction parse_instruction(const std::string& text) {
  Instruction ins;
  std::string t = trim(text);
  size_t space = t.find_first_of(" \t");
  ins.mnemonic = t.substr(0, space);
  if (space == std::string::npos) return ins;
  int depth = 0;
  std::string cur;
  for (char c : t.substr(space + 1)) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      ins.operands.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) ins.operands.push_back(trim(cur));
  return ins;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// AArch64: the arrangement of a vector register operand ("v0.4s" -> "4s"), or "" for scalar.
std::string arrangement(const std::string& operand) {
  size_t dot = operand.find('.');
  if (operand.empty() || operand[0] != 'v' || dot == std::string::npos) return "";
  std::string a = operand.substr(dot + 1);
  return a.substr(0, a.find('['));
}

MacKind aarch64_mac(const Instruction& ins) {
  const std::string& m = ins.mnemonic;
  if (ins.operands.empty()) return {};
  const std::string arr = arrangement(ins.operands[0]);
  const char first = ins.operands[0][0];
  auto lanes = [&](const std::string& a) { return a.empty() ? 0 : std::stoi(a); };
  if (m == "fmla" || m == "fmls") {
    const char* type = arr.ends_with("s") ? "f32" : arr.ends_with("h") ? "f16" : "f64";
    if (arr.empty()) {  // the scalar by-element form: "fmla s0, s1, v2.s[1]"
      type = first == 's' ? "f32" : first == 'h' ? "f16" : "f64";
      return {m + " " + std::string(1, first), type, 1};
    }
    return {m + " ." + arr, type, double(lanes(arr))};
  }
  if (m == "fmadd" || m == "fmsub" || m == "fnmadd" || m == "fnmsub")
    return {m + " " + std::string(1, first),
            first == 's'   ? "f32"
            : first == 'h' ? "f16"
                           : "f64",
            1};
  if (m == "bfmmla") return {m, "bf16", 16};  // 2x4 by 4x2 bf16 into 2x2 f32
  if (m == "bfdot") return {m + " ." + arr, "bf16", 2.0 * lanes(arr)};
  if (m == "bfmlalb" || m == "bfmlalt") return {m, "bf16", 4};
  if (m == "sdot" || m == "udot" || m == "usdot" || m == "sudot")
    return {m + " ." + arr, "int8", 4.0 * lanes(arr)};
  if (m == "smmla" || m == "ummla" || m == "usmmla") return {m, "int8", 32};  // 2x8 by 8x2
  if (m == "smlal" || m == "umlal" || m == "smlal2" || m == "umlal2")
    return {m + " ." + arr, arr == "8h" ? "int8" : "int16", double(lanes(arr))};
  return {};
}

// x86: a register's width in bits ("%ymm3" -> 256), 0 for anything else.
int vector_bits(const std::string& operand) {
  if (starts_with(operand, "%xmm")) return 128;
  if (starts_with(operand, "%ymm")) return 256;
  if (starts_with(operand, "%zmm")) return 512;
  return 0;
}

MacKind x86_mac(const Instruction& ins) {
  const std::string& m = ins.mnemonic;
  if (ins.operands.empty()) return {};
  const int bits = vector_bits(ins.operands.back());  // AT&T: the destination is last
  const std::string reg = bits == 128 ? "xmm" : bits == 256 ? "ymm" : "zmm";
  static const std::regex fma("v(f|fn)m(add|sub|addsub|subadd)(132|213|231)(ps|pd|ph|ss|sd|sh)");
  std::smatch s;
  if (std::regex_match(m, s, fma)) {
    const std::string t = s[4];
    const char* type = t[1] == 's' ? "f32" : t[1] == 'd' ? "f64" : "f16";
    if (t[0] == 's') return {m, type, 1};  // scalar
    const int elem = t[1] == 's' ? 32 : t[1] == 'd' ? 64 : 16;
    return {m + " " + reg, type, double(bits / elem)};
  }
  if (!bits) {
    if (m == "tdpbf16ps" || m == "tdpfp16ps") return {m, m == "tdpbf16ps" ? "bf16" : "f16", 8192};
    if (starts_with(m, "tdpb")) return {m, "int8", 16384};  // 16x64 by 64x16 int8 tiles
    return {};
  }
  if (m == "vdpbf16ps") return {m + " " + reg, "bf16", 2.0 * bits / 32};
  if (m == "vpdpbusd" || m == "vpdpbusds") return {m + " " + reg, "int8", 4.0 * bits / 32};
  if (m == "vpdpwssd" || m == "vpdpwssds") return {m + " " + reg, "int16", 2.0 * bits / 32};
  if (m == "vpmaddubsw") return {m + " " + reg, "int8", 2.0 * bits / 16};
  if (m == "vpmaddwd") return {m + " " + reg, "int16", 2.0 * bits / 32};
  return {};
}

// Memory operations: AArch64 names them (ld*, st*); an AT&T memory operand has parentheses,
// and is stored to when it is the last operand (lea only computes an address).
struct MemoryUse {
  bool load = false, store = false;
};

MemoryUse memory_use(const Instruction& ins, bool aarch64) {
  MemoryUse u;
  if (aarch64) {
    const std::string& m = ins.mnemonic;
    u.load = starts_with(m, "ld");
    u.store = starts_with(m, "st");
    return u;
  }
  if (starts_with(ins.mnemonic, "lea") || starts_with(ins.mnemonic, "prefetch")) return u;
  for (size_t i = 0; i < ins.operands.size(); ++i) {
    const std::string& o = ins.operands[i];
    if (o.find('(') == std::string::npos) continue;
    const bool last = i + 1 == ins.operands.size() && ins.operands.size() > 1;
    (last ? u.store : u.load) = true;
  }
  return u;
}

bool is_block_label(const std::string& s) {
  return starts_with(s, ".LBB");
}

struct Line {
  enum Kind { Label, Op, Other } kind = Other;
  std::string text;  // the label's name, or the instruction without its comment
  // Register allocation's own words in a verbose listing: "32-byte Spill", "16-byte Folded
  // Reload". A stack buffer the kernel allocated is not a spill and carries neither.
  bool spill = false, reload = false;
};

}  // namespace

MacKind mac_kind_of(const std::string& instruction, bool aarch64) {
  Instruction ins = parse_instruction(instruction);
  return aarch64 ? aarch64_mac(ins) : x86_mac(ins);
}

InstructionRole role_of(const std::string& instruction, bool aarch64) {
  Instruction ins = parse_instruction(instruction);
  if (!(aarch64 ? aarch64_mac(ins) : x86_mac(ins)).name.empty()) return InstructionRole::Mac;
  const MemoryUse mem = memory_use(ins, aarch64);
  return mem.store  ? InstructionRole::Store
         : mem.load ? InstructionRole::Load
                    : InstructionRole::Other;
}

std::vector<AsmLoop> innermost_loops(const std::string& assembly, bool aarch64) {
  // The listing as labels and instructions, each with the function it lies in.
  std::vector<Line> lines;
  std::vector<std::string> function_of;
  std::map<std::string, size_t> label_at;
  std::string function;
  std::istringstream in(assembly);
  for (std::string raw; std::getline(in, raw);) {
    const size_t c = comment_at(raw, aarch64);
    const std::string comment = c == std::string::npos ? "" : raw.substr(c);
    std::string text = trim(raw.substr(0, c));
    if (text.empty()) continue;
    Line line;
    if (text.back() == ':' && !std::isspace(static_cast<unsigned char>(raw[0]))) {
      line = {Line::Label, text.substr(0, text.size() - 1)};
      if (!starts_with(line.text, ".L")) function = line.text;
      label_at[line.text] = lines.size();
    } else if (text[0] != '.') {
      line = {Line::Op, text, comment.find(" Spill") != std::string::npos,
              comment.find(" Reload") != std::string::npos};
    } else {
      continue;  // a directive
    }
    lines.push_back(line);
    function_of.push_back(function);
  }

  // Loops: a branch back to a block label above it, as [header, branch] line ranges.
  std::vector<std::pair<size_t, size_t>> loops;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind != Line::Op) continue;
    Instruction ins = parse_instruction(lines[i].text);
    if (ins.operands.empty() || !is_block_label(ins.operands.back())) continue;
    auto at = label_at.find(ins.operands.back());
    if (at != label_at.end() && at->second < i) loops.push_back({at->second, i});
  }
  auto holds_another = [&](const std::pair<size_t, size_t>& outer) {
    return std::any_of(loops.begin(), loops.end(), [&](const auto& inner) {
      return inner != outer && inner.first >= outer.first && inner.second <= outer.second;
    });
  };

  std::vector<AsmLoop> found;
  for (const auto& range : loops) {
    if (holds_another(range)) continue;
    AsmLoop loop;
    loop.function = function_of[range.first];
    loop.label = lines[range.first].text;
    struct Count {
      MacKind kind;
      int n = 0;
      std::string example;
    };
    std::map<std::string, Count> macs;                     // by class name
    std::map<std::string, std::set<std::string>> written;  // class -> destination registers
    for (size_t i = range.first; i <= range.second; ++i) {
      loop.instructions.push_back(lines[i].kind == Line::Label ? lines[i].text + ":"
                                                               : lines[i].text);
      if (lines[i].kind != Line::Op) continue;
      Instruction ins = parse_instruction(lines[i].text);
      MemoryUse mem = memory_use(ins, aarch64);
      loop.loads += mem.load;
      loop.stores += mem.store;
      loop.spill_loads += lines[i].reload;
      loop.spill_stores += lines[i].spill;
      MacKind kind = aarch64 ? aarch64_mac(ins) : x86_mac(ins);
      if (kind.name.empty()) continue;
      // The destination: AArch64's first operand, AT&T's last ("v2.4s" -> "v2").
      std::string dest = aarch64 ? ins.operands.front() : ins.operands.back();
      written[kind.name].insert(dest.substr(0, dest.find('.')));
      Count& c = macs[kind.name];
      if (c.n++ == 0) c = {kind, 1, lines[i].text};
    }
    // The class doing most MACs speaks for the loop (AVX2's int8 path pairs vpmaddubsw with
    // a vpmaddwd that only widens its sums: those are not counted again).
    for (const auto& [name, c] : macs)
      if (c.kind.macs * c.n > loop.macs) {
        loop.mac = c.kind;
        loop.mac_instructions = c.n;
        loop.macs = c.kind.macs * c.n;
        loop.mac_example = c.example;
        loop.accumulators = int(written[name].size());
      }
    found.push_back(std::move(loop));
  }
  // The micro-kernel first: of the loops dense in multiply-accumulates (at least 40% of the
  // densest one's share), the one with the most accumulators, then the most MACs. Not the
  // most MACs per iteration: a Winograd transform unrolled over a whole tile holds more (1
  // line in 10 an FMA against 2 in 3 in the product's loop) but runs once per tile, and a
  // remainder loop over the last output column, unrolled over the whole reduction, can too.
  // Not simply the densest: a register tile that spills is diluted by its spills.
  double densest = 0;
  for (const AsmLoop& l : found) densest = std::max(densest, l.mac_density());
  auto dense = [&](const AsmLoop& l) { return l.macs > 0 && l.mac_density() >= 0.4 * densest; };
  std::stable_sort(found.begin(), found.end(), [&](const AsmLoop& a, const AsmLoop& b) {
    if (dense(a) != dense(b)) return dense(a);
    if (!dense(a)) return a.mac_density() > b.mac_density();
    if (a.accumulators != b.accumulators) return a.accumulators > b.accumulators;
    return a.macs > b.macs;
  });
  return found;
}

}  // namespace kiln::codegen
