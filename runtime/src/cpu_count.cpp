// How many CPUs the process may really use: the affinity mask and the cgroup CPU quota, the
// smaller of the two. std::thread::hardware_concurrency() reports neither (a container limited
// to 2 CPUs on a 64-core host would otherwise start 64 threads that fight for 2).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kiln/runtime.h"
#include "message.h"

namespace kiln {
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(ws);
  return s.substr(first, last - first + 1);
}

// The whole of `s` as a decimal integer, else nullopt.
std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<int> ceil_ratio(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const int64_t cpus = (quota + period - 1) / period;
  return static_cast<int>(std::min<int64_t>(cpus, 1 << 20));
}

// The file's text, or nullopt when it cannot be read (missing controller, no /sys, ...).
// stdio rather than iostreams: these files are a line long, and iostreams would be the largest
// part of the tiny runtime.
std::optional<std::string> read_text(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  std::string text;
  char chunk[512];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return std::nullopt;
  return text;
}

}  // namespace

std::optional<int> parse_cgroup_v2_cpu_max(std::string_view cpu_max) {
  cpu_max = trim(cpu_max);
  const auto space = cpu_max.find_first_of(" \t");
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota = cpu_max.substr(0, space);
  if (quota == "max") return std::nullopt;
  const auto q = parse_int(quota);
  const auto p = parse_int(cpu_max.substr(space + 1));
  if (!q || !p) return std::nullopt;
  return ceil_ratio(*q, *p);
}

std::optional<int> parse_cgroup_v1_cpu_quota(std::string_view quota_us,
                                             std::string_view period_us) {
  const auto q = parse_int(quota_us);
  const auto p = parse_int(period_us);
  if (!q || !p) return std::nullopt;  // -1 (unlimited) is rejected by ceil_ratio
  return ceil_ratio(*q, *p);
}

std::optional<int> parse_thread_count(std::string_view text) {
  const auto n = parse_int(text);
  if (!n || *n <= 0 || *n > (1 << 16)) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<std::string> parse_proc_self_cgroup(std::string_view proc_self_cgroup) {
  // Views into the text until the end: a string is made only for the answer.
  std::string_view v1;
  bool has_v1 = false;
  while (!proc_self_cgroup.empty()) {
    const auto eol = proc_self_cgroup.find('\n');
    const std::string_view line = proc_self_cgroup.substr(0, eol);
    proc_self_cgroup =
        eol == std::string_view::npos ? std::string_view{} : proc_self_cgroup.substr(eol + 1);
    // "hierarchy-ID:controller-list:cgroup-path"
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view path = trim(line.substr(c2 + 1));
    if (c1 == 1 && line[0] == '0' && c2 == 2) return std::string(path);  // v2 wins over v1
    std::string_view rest = line.substr(c1 + 1, c2 - c1 - 1);
    while (!has_v1 && !rest.empty()) {
      const auto comma = rest.find(',');
      if (rest.substr(0, comma) == "cpu") v1 = path, has_v1 = true;
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  if (!has_v1) return std::nullopt;
  return std::string(v1);
}

int affinity_cpu_count() {
  // The mask may need more than CPU_SETSIZE bits on very large machines: grow until it fits.
  for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpus);
    if (!set) break;
    const std::size_t bytes = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(0, bytes, set);
    const int count = rc == 0 ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return std::max(count, 1);
    if (errno != EINVAL) break;
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::optional<int> cgroup_cpu_limit() {
  // The process's own cgroup directory first; inside a container with a cgroup namespace that
  // path is "/" anyway, and without one the directory may not be mounted, so fall back to the
  // mount root. (Fixed arrays rather than lists of paths: this is part of the tiny runtime.)
  const auto self = read_text("/proc/self/cgroup");
  const auto own = self ? parse_proc_self_cgroup(*self) : std::nullopt;
  const std::string_view dirs[2] = {own && *own != "/" ? std::string_view(*own) : "", ""};
  for (const std::string_view dir : dirs) {
    if (const auto text = read_text(concat({"/sys/fs/cgroup", dir, "/cpu.max"})))
      return parse_cgroup_v2_cpu_max(*text);
  }
  for (const std::string_view dir : dirs) {
    for (const char* controller : {"/cpu", "/cpu,cpuacct"}) {
      const auto quota = read_text(concat({"/sys/fs/cgroup", controller, dir, "/cpu.cfs_quota_us"}));
      const auto period =
          read_text(concat({"/sys/fs/cgroup", controller, dir, "/cpu.cfs_period_us"}));
      if (quota && period) return parse_cgroup_v1_cpu_quota(*quota, *period);
    }
  }
  return std::nullopt;
}

uint64_t allowed_cpus() {
  // The kernel's CPU masks are arrays of longs, bit i of the first being CPU i: a 64-bit mask
  // is the first long. With more than 64 possible CPUs the kernel refuses so short a mask.
  uint64_t mask = 0;
  return sched_getaffinity(0, sizeof mask, reinterpret_cast<cpu_set_t*>(&mask)) == 0 ? mask : 0;
}

uint64_t fastest_cpus(uint64_t allowed, const char* sysfs_cpu) {
  int64_t capacity[64], most = 0, least = INT64_MAX;
  for (int cpu = 0; cpu < 64; ++cpu) {
    if (!(allowed >> cpu & 1)) continue;
    // A fixed buffer and stdio: this file is a number long, and the runtime is small.
    char path[512], text[24];
    std::snprintf(path, sizeof path, "%s/cpu%d/cpu_capacity", sysfs_cpu, cpu);
    std::FILE* f = std::fopen(path, "re");
    const std::size_t n = f ? std::fread(text, 1, sizeof text, f) : 0;
    if (f) std::fclose(f);
    const auto value = parse_int(std::string_view(text, n));
    if (!value || *value <= 0) return 0;  // a CPU the kernel says nothing of: no ranking
    capacity[cpu] = *value;
    most = std::max(most, *value);
    least = std::min(least, *value);
  }
  uint64_t fast = 0;
  for (int cpu = 0; cpu < 64 && most != least; ++cpu)
    if (allowed >> cpu & 1 && 4 * capacity[cpu] >= 3 * most) fast |= uint64_t{1} << cpu;
  return fast;
}

int available_cpu_count() {
  const int affinity = affinity_cpu_count();
  const auto quota = cgroup_cpu_limit();
  return quota ? std::max(1, std::min(affinity, *quota)) : affinity;
}

int default_num_threads() {
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    if (const auto n = parse_thread_count(env)) return *n;
  }
  const int available = available_cpu_count();
  const int fast = __builtin_popcountll(fastest_cpus(allowed_cpus()));
  return fast ? std::min(available, fast) : available;
}

}  // namespace kiln
