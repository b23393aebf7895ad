#include "tests/codegen/codegen_test_util.h"

#include <dlfcn.h>
#include <elf.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace kiln::codegen::testing {
namespace {

std::atomic<int> g_parallel_calls{0};
std::atomic<int> g_live_workspaces{0};
std::atomic<bool> g_fail_alloc{false};

int32_t parallel_threads(int64_t extent, kiln_parallel_body body, void* closure) {
  ++g_parallel_calls;
  const int64_t chunks = std::min<int64_t>(extent, 3);
  std::vector<std::thread> threads;
  std::vector<int32_t> status(chunks, 0);
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = extent * c / chunks, end = extent * (c + 1) / chunks;
    threads.emplace_back([=, &status] { status[c] = body(begin, end, closure); });
  }
  for (auto& t : threads) t.join();
  for (int32_t s : status)
    if (s != 0) return s;
  return 0;
}

int32_t parallel_serial(int64_t extent, kiln_parallel_body body, void* closure) {
  ++g_parallel_calls;
  for (int64_t i = 0; i < extent; ++i)
    if (int32_t s = body(i, i + 1, closure)) return s;
  return 0;
}

void* alloc_workspace(uint64_t nbytes) {
  if (g_fail_alloc) return nullptr;
  ++g_live_workspaces;
  return std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
}

void free_workspace(void* p) {
  --g_live_workspaces;
  std::free(p);
}

}  // namespace

kiln_runtime_api TestRuntime::api(bool threaded) {
  return {KILN_ABI_VERSION, threaded ? parallel_threads : parallel_serial, alloc_workspace,
          free_workspace};
}
int TestRuntime::parallel_calls() {
  return g_parallel_calls;
}
int TestRuntime::live_workspaces() {
  return g_live_workspaces;
}
void TestRuntime::fail_next_allocations(bool fail) {
  g_fail_alloc = fail;
}

// This process's scratch directory, removed when the process ends.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    path =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-codegen-test-" + std::to_string(getpid());
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::string temp_path(const std::string& stem) {
  static ScratchDir dir;
  static std::atomic<int> counter{0};
  return (dir.path / (stem + "-" + std::to_string(counter++))).string();
}

LoadedModule::LoadedModule(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
}
LoadedModule::~LoadedModule() {
  if (handle_) dlclose(handle_);
}
int32_t LoadedModule::init(const kiln_runtime_api* api) {
  auto f = reinterpret_cast<kiln_module_init_fn>(dlsym(handle_, KILN_MODULE_INIT_SYMBOL));
  if (!f) throw std::runtime_error("no kiln_module_init");
  return f(api);
}
int32_t LoadedModule::call(const std::string& kernel, std::vector<void*> args) {
  auto f = reinterpret_cast<kiln_kernel_fn>(dlsym(handle_, kernel.c_str()));
  if (!f) throw std::runtime_error("no kernel " + kernel);
  return f(args.data());
}

std::string build(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                  const CodegenOptions& options) {
  std::string path = temp_path(funcs.empty() ? "empty" : funcs[0].name) + ".so";
  build_shared_object(funcs, target, path, options);
  return path;
}

ElfSummary read_elf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(Elf64_Ehdr)) throw std::runtime_error("not an ELF file: " + path);
  auto at = [&](uint64_t off) { return bytes.data() + off; };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(at(0));
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error("not a 64-bit ELF file: " + path);
  ElfSummary s;
  s.machine = eh->e_machine;
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(at(eh->e_shoff));
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type == SHT_DYNAMIC) {
      const char* strtab = at(sh[sh[i].sh_link].sh_offset);
      const auto* dyn = reinterpret_cast<const Elf64_Dyn*>(at(sh[i].sh_offset));
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k)
        if (dyn[k].d_tag == DT_NEEDED) s.needed.push_back(strtab + dyn[k].d_un.d_val);
    }
    if (sh[i].sh_type == SHT_DYNSYM) {
      const char* strtab = at(sh[sh[i].sh_link].sh_offset);
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(at(sh[i].sh_offset));
      for (size_t k = 1; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
        std::string name = strtab + sym[k].st_name;
        if (sym[k].st_shndx == SHN_UNDEF) {
          s.undefined.push_back(name);
        } else if (ELF64_ST_BIND(sym[k].st_info) != STB_LOCAL) {
          s.exported.push_back(name);
        }
      }
    }
  }
  return s;
}

uint16_t f32_to_bf16_ref(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((std::bit_cast<uint32_t>(f) >> 16) | 0x40);
  // Round to nearest even on the exact value, by long-hand comparison with the two
  // neighbours (not the bit trick the code under test uses).
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint32_t down = u & 0xffff0000u, rest = u & 0xffffu;
  uint32_t hi = down >> 16;
  if (rest > 0x8000u || (rest == 0x8000u && (hi & 1))) ++hi;
  return static_cast<uint16_t>(hi);
}

float bf16_to_f32_ref(uint16_t h) {
  return std::bit_cast<float>(uint32_t{h} << 16);
}

float f16_to_f32_ref(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mant + 1024), exp - 25);
  }
  return sign ? -v : v;
}

uint16_t f32_to_f16_ref(float f) {
  // The f16 whose value is nearest (ties to even mantissa), by search over magnitudes:
  // slow and obviously right.
  if (std::isnan(f)) return 0x7e00;
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(f));
  uint16_t lo = 0, hi = 0x7c00;  // finite magnitudes are 0..0x7bff, 0x7c00 is inf
  while (hi - lo > 1) {
    uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    if (static_cast<double>(f16_to_f32_ref(mid)) <= a)
      lo = mid;
    else
      hi = mid;
  }
  // lo <= a < value(hi) (value(0x7c00) taken as 65536, where rounding to inf starts).
  double vlo = f16_to_f32_ref(lo), vhi = hi == 0x7c00 ? 65536.0 : f16_to_f32_ref(hi);
  if (a == vlo) return sign | lo;
  double dlo = a - vlo, dhi = vhi - a;
  uint16_t r = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
  return sign | r;
}

}  // namespace kiln::codegen::testing
