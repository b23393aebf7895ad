// CPU counting: the cgroup and /proc parsers on sample texts, the fast cores of a board whose
// cores differ on sample sysfs trees, and sanity of the live values.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "kiln/runtime.h"

namespace kiln {
namespace {

TEST(CgroupV2, UnlimitedIsNoLimit) {
  EXPECT_EQ(parse_cgroup_v2_cpu_max("max 100000"), std::nullopt);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("max 100000\n"), std::nullopt);
}

TEST(CgroupV2, QuotaRoundsUp) {
  EXPECT_EQ(parse_cgroup_v2_cpu_max("150000 100000"), 2);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("200000 100000\n"), 2);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("100000 100000"), 1);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("50000 100000"), 1);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("1600000 100000"), 16);
  EXPECT_EQ(parse_cgroup_v2_cpu_max("  250000\t100000  "), 3);
}

TEST(CgroupV2, GarbageIsIgnored) {
  for (const char* text : {"", "\n", "max", "100000", "abc 100000", "100000 abc", "100000 0",
                           "0 100000", "-5 100000", "1.5 100000", "100000 100000 7"}) {
    EXPECT_EQ(parse_cgroup_v2_cpu_max(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(CgroupV1, QuotaOverPeriod) {
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("250000\n", "100000\n"), 3);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("100000", "100000"), 1);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("50000", "100000"), 1);
}

TEST(CgroupV1, GarbageIsIgnored) {
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("", "100000"), std::nullopt);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("lots", "100000"), std::nullopt);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("100000", ""), std::nullopt);
  EXPECT_EQ(parse_cgroup_v1_cpu_quota("100000", "0"), std::nullopt);
}

TEST(ThreadCount, PositiveIntegersOnly) {
  EXPECT_EQ(parse_thread_count("4"), 4);
  EXPECT_EQ(parse_thread_count(" 8\n"), 8);
  for (const char* text : {"", "0", "-2", "x", "4x", "2.5", "99999999999"}) {
    EXPECT_EQ(parse_thread_count(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ProcSelfCgroup, V2Path) {
  EXPECT_EQ(parse_proc_self_cgroup("0::/user.slice/session-1.scope\n"),
            "/user.slice/session-1.scope");
  EXPECT_EQ(parse_proc_self_cgroup("0::/\n"), "/");
}

TEST(ProcSelfCgroup, V1CpuController) {
  const char* text =
      "12:memory:/docker/abc\n"
      "4:cpu,cpuacct:/docker/abc\n"
      "1:name=systemd:/docker/abc\n";
  EXPECT_EQ(parse_proc_self_cgroup(text), "/docker/abc");
  // "cpuacct" or "cpuset" alone is not the cpu controller.
  EXPECT_EQ(parse_proc_self_cgroup("3:cpuset:/a\n5:cpuacct:/b\n"), std::nullopt);
}

TEST(ProcSelfCgroup, HybridPrefersV2) {
  EXPECT_EQ(parse_proc_self_cgroup("4:cpu,cpuacct:/v1\n0::/v2\n"), "/v2");
}

TEST(ProcSelfCgroup, GarbageIsIgnored) {
  EXPECT_EQ(parse_proc_self_cgroup(""), std::nullopt);
  EXPECT_EQ(parse_proc_self_cgroup("nonsense\nmore nonsense"), std::nullopt);
}

// A sysfs CPU folder of a made-up machine: cpuN/cpu_capacity for each capacity given (0: the
// file is missing), in a fresh temporary folder removed with the object.
class SysfsCpus {
 public:
  explicit SysfsCpus(const std::vector<int>& capacities) {
    char name[] = "/tmp/kiln-sysfs-XXXXXX";
    root_ = mkdtemp(name);
    for (std::size_t cpu = 0; cpu < capacities.size(); ++cpu) {
      const std::filesystem::path dir = root_ / ("cpu" + std::to_string(cpu));
      std::filesystem::create_directories(dir);
      if (capacities[cpu] > 0) std::ofstream(dir / "cpu_capacity") << capacities[cpu] << "\n";
    }
  }
  ~SysfsCpus() { std::filesystem::remove_all(root_); }
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

// A mask of the CPUs listed.
uint64_t cpus(std::initializer_list<int> list) {
  uint64_t mask = 0;
  for (const int cpu : list) mask |= uint64_t{1} << cpu;
  return mask;
}

TEST(FastestCpus, TheBigCoresOfABigLittleBoard) {
  // An RK3399: cpu0-3 are Cortex-A53 (capacity 485), cpu4-5 Cortex-A72 (1024).
  const SysfsCpus rk3399({485, 485, 485, 485, 1024, 1024});
  EXPECT_EQ(fastest_cpus(cpus({0, 1, 2, 3, 4, 5}), rk3399.path().c_str()), cpus({4, 5}));
  // Only the CPUs the process may use count: the little ones alone are all alike.
  EXPECT_EQ(fastest_cpus(cpus({0, 1, 2}), rk3399.path().c_str()), 0u);
  EXPECT_EQ(fastest_cpus(cpus({3, 5}), rk3399.path().c_str()), cpus({5}));
}

TEST(FastestCpus, APrimeCoreKeepsItsBigClusterCompany) {
  // A phone's 1 + 3 + 4: the big cores within a quarter of the prime core count as fast.
  const SysfsCpus phone({250, 250, 250, 250, 870, 870, 870, 1024});
  EXPECT_EQ(fastest_cpus(cpus({0, 1, 2, 3, 4, 5, 6, 7}), phone.path().c_str()), cpus({4, 5, 6, 7}));
}

TEST(FastestCpus, NoneWhereTheCoresAreAlikeOrNothingSays) {
  const SysfsCpus pi4({1024, 1024, 1024, 1024});
  EXPECT_EQ(fastest_cpus(cpus({0, 1, 2, 3}), pi4.path().c_str()), 0u);
  const SysfsCpus one_unknown({485, 1024, 0});
  EXPECT_EQ(fastest_cpus(cpus({0, 1, 2}), one_unknown.path().c_str()), 0u);
  EXPECT_EQ(fastest_cpus(cpus({0, 1}), "/nonexistent/kiln/sysfs"), 0u);
  EXPECT_EQ(fastest_cpus(0, pi4.path().c_str()), 0u);
}

TEST(LiveCounts, AreSane) {
  const int affinity = affinity_cpu_count();
  EXPECT_GE(affinity, 1);
  if (const uint64_t mine = allowed_cpus()) EXPECT_EQ(__builtin_popcountll(mine), affinity);
  const int available = available_cpu_count();
  EXPECT_GE(available, 1);
  EXPECT_LE(available, affinity);
  if (const auto limit = cgroup_cpu_limit()) {
    EXPECT_GE(*limit, 1);
  }
}

TEST(LiveCounts, EnvironmentOverridesDefault) {
  const char* old = getenv("KILN_NUM_THREADS");
  const std::string saved = old ? old : "";
  setenv("KILN_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_num_threads(), 3);
  setenv("KILN_NUM_THREADS", "garbage", 1);  // ignored, not fatal
  const int fast = __builtin_popcountll(fastest_cpus(allowed_cpus()));
  const int fit = fast ? std::min(available_cpu_count(), fast) : available_cpu_count();
  EXPECT_EQ(default_num_threads(), fit);
  if (old) {
    setenv("KILN_NUM_THREADS", saved.c_str(), 1);
  } else {
    unsetenv("KILN_NUM_THREADS");
  }
}

}  // namespace
}  // namespace kiln
