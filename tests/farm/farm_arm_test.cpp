// The device farm across architectures, as real processes on 127.0.0.1: a tracker, two native
// workers and one AArch64 worker (cross-built kiln-worker under qemu-aarch64, starting its
// sandbox under qemu too: there is no binfmt_misc here), measuring kernels built by kiln's own
// compiler for "host" and "arm-neon" as well as the hand-written fixture module (built for
// each). Skipped, with the reason, when qemu, the cross-built worker or the cross compiler is
// missing.
#include <elf.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "compiler/codegen/build.h"
#include "compiler/lower/lower.h"
#include "compiler/target/target.h"
#include "rpc/farm/data.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/run_program.h"
#include "runtime/process/temp_dir.h"
#include "tests/farm/farm_harness.h"

namespace kiln::farm {
namespace {

using testing::Farm;

std::string describe(const pb::Result& r) {
  return "job " + std::to_string(r.index()) + ": " + error_kind_name(r.error()) + " " +
         r.message() + " on " + r.worker_id();
}

// out[i] = a[i] * b[i] + a[i], vectorized to the target's lanes with a scalar tail: a real
// kernel from kiln's compiler (TE -> lowered loop IR -> LLVM -> .so linked in process).
std::vector<uint8_t> compile_mul_add(const std::string& target_name, int64_t n,
                                     const std::string& dir) {
  using namespace kiln::te;
  const Target target = target_from_name(target_name);
  Tensor a = placeholder({Expr(n)}, DataType::f32(), "a");
  Tensor b = placeholder({Expr(n)}, DataType::f32(), "b");
  Tensor out = compute(
      {Expr(n)}, [&](Var i) { return a(i) * b(i) + a(i); }, "out");
  Schedule s({out});
  Stage st = s[out];
  auto [io, ii] = st.split(st.axis(0), target.lanes(DataType::f32()));
  st.vectorize(ii);
  const ir::LoweredFunc f = lower::lower(s, {a, b, out}, "mul_add");
  const std::string path = dir + "/mul_add_" + target_name + "_" + std::to_string(n) + ".so";
  codegen::build_shared_object({f}, target, path);
  return testing::read_binary(path);
}

pb::Job mul_add_job(const std::vector<uint8_t>& so, int64_t n, uint64_t seed, double timeout_s) {
  pb::Job job;
  job.set_so(so.data(), so.size());
  job.set_entry("mul_add");
  job.set_seed(seed);
  job.set_number(1);
  job.set_repeat(2);
  job.set_timeout_s(timeout_s);
  for (int k = 0; k < 3; ++k) {
    pb::Arg* arg = job.add_args();
    arg->set_dtype(pb::F32);
    arg->add_shape(n);
    arg->set_is_output(k == 2);
  }
  // The reference from the same deterministic inputs the sandbox fills.
  const std::vector<uint8_t> a = fill_arg(job.args(0), seed, 0), b = fill_arg(job.args(1), seed, 1);
  std::vector<float> want(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < want.size(); ++i) {
    float x, y;
    std::memcpy(&x, a.data() + 4 * i, 4);
    std::memcpy(&y, b.data() + 4 * i, 4);
    want[i] = x * y + x;
  }
  job.mutable_check()->add_reference(want.data(), want.size() * sizeof(float));
  job.mutable_check()->set_rtol(1e-5);
  return job;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) {
    if (!s.empty()) s += ' ';
    s += w;
  }
  return s;
}

// Why the AArch64 worker cannot run here ("" when it can): qemu, or the cross-built worker.
std::string arm_worker_missing() {
  if (aarch64_qemu_prefix().empty()) return "qemu-aarch64 is not on PATH";
  if (std::string(KILN_AARCH64_WORKER).empty() || !std::filesystem::exists(KILN_AARCH64_WORKER))
    return "no AArch64 kiln-worker (the cross build needs libgrpc++-dev:arm64 and "
           "libprotobuf-dev:arm64: scripts/install-deps.sh)";
  return "";
}

// `kiln-worker --print-board` on the board tells the user which --target to tune for: run
// here under qemu as each core (qemu's user mode shows the host's /proc/cpuinfo, so the core
// comes from its ID register).
TEST(FarmArm, TheBoardWorkerNamesItsCoreAndTarget) {
  if (const std::string why = arm_worker_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  struct Case {
    const char* cpu;
    const char* board;
    const char* target;
  };
  for (const Case& c : {Case{"cortex-a72", "ARM Cortex-A72", "kiln target: cortex-a72"},
                        Case{"cortex-a76", "ARM Cortex-A76", "kiln target: cortex-a76"},
                        Case{"neoverse-n1", "ARM Neoverse-N1", "kiln target: neoverse-n1"},
                        Case{"cortex-a57", "ARM Cortex-A57", "kiln target: arm-neon"}}) {
    std::vector<std::string> argv = qemu;
    argv[2] = c.cpu;  // qemu-aarch64 -cpu CPU -L ROOT
    argv.insert(argv.end(), {KILN_AARCH64_WORKER, "--print-board"});
    TempDir dir;
    const ProgramRun r = run_program(argv, dir.path());
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(std::string("board: ") + c.board), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.target), std::string::npos) << r.out;
  }
}

// What an ELF program needs before its first instruction: a program interpreter (the dynamic
// loader, PT_INTERP) and a dynamic section (PT_DYNAMIC), as its program headers say.
struct ElfNeeds {
  uint16_t machine = 0;
  bool interpreter = false, dynamic_section = false;
};

ElfNeeds elf_needs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(path + " is not a 64-bit ELF file");
  ElfNeeds needs;
  needs.machine = header.e_machine;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * header.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph))
      throw std::runtime_error(path + ": program headers cut short");
    needs.interpreter |= ph.p_type == PT_INTERP;
    needs.dynamic_section |= ph.p_type == PT_DYNAMIC;
  }
  return needs;
}

// docs/deploy.md's promise: the board's programs are the whole install. The worker and its
// kernel runner are copied into a folder with nothing else in it and started under plain
// qemu-aarch64 (no -L: no sysroot, no loader); the worker runs its jobs in the runner beside it,
// which dlopens kernels kiln compiled for arm-neon, and every result is checked.
TEST(FarmArm, TheStaticBoardWorkerServesJobsFromAFolderOfItsOwn) {
  if (const std::string why = arm_worker_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  for (const std::string program :
       {KILN_AARCH64_WORKER, KILN_AARCH64_RUNNER, KILN_AARCH64_MODEL_APP}) {
    const ElfNeeds needs = elf_needs(program);
    EXPECT_EQ(needs.machine, EM_AARCH64) << program;
    EXPECT_FALSE(needs.interpreter) << program << " asks for a dynamic loader";
    EXPECT_FALSE(needs.dynamic_section) << program << " is dynamically linked";
  }

  Farm farm;
  const std::filesystem::path board = std::filesystem::path(farm.dir()) / "board";
  std::filesystem::create_directory(board);
  for (const std::string program : {KILN_AARCH64_WORKER, KILN_AARCH64_RUNNER})
    std::filesystem::copy_file(program, board / std::filesystem::path(program).filename());
  const std::vector<std::string> plain_qemu = {qemu.front(), "-cpu", "cortex-a72"};
  std::vector<std::string> command = plain_qemu;
  command.push_back((board / "kiln-worker").string());
  farm.start_worker_command(command, "rpi4", {"--sandbox-prefix", join(plain_qemu)});

  std::vector<pb::Job> jobs;
  for (const int64_t n : {1024, 1003}) {
    const std::vector<uint8_t> so = compile_mul_add("arm-neon", n, farm.dir());
    for (uint64_t seed = 1; seed <= 2; ++seed) jobs.push_back(mul_add_job(so, n, seed * 7 + n, 30));
  }
  farm.wait_for_workers("rpi4", 1, 30);
  const std::vector<pb::Result> results = farm.client().submit("rpi4", jobs)->wait_all();
  ASSERT_EQ(results.size(), jobs.size());
  for (const pb::Result& r : results) {
    EXPECT_EQ(r.error(), pb::OK) << describe(r) << "\n" << testing::read_text(farm.worker_log(0));
    EXPECT_EQ(r.machine().emulator(), std::filesystem::path(qemu.front()).filename().string());
  }
}

TEST(FarmArm, FiftyMixedJobsNativeAndArmKeysRunOnTheirWorkers) {
  if (const std::string why = arm_worker_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (std::string(KILN_AARCH64_FARM_FIXTURE).empty()) GTEST_SKIP() << "no AArch64 cross compiler";

  Farm farm;
  // The ARM worker first: it is the slowest to start. Its sandbox runs under the same qemu.
  std::vector<std::string> arm_command = qemu;
  arm_command.push_back(KILN_AARCH64_WORKER);
  farm.start_worker_command(arm_command, "arm", {"--sandbox-prefix", join(qemu)});
  farm.start_worker("host");
  farm.start_worker("host");

  // Meanwhile: kernels from the real compiler, for both targets, with and without a tail.
  const std::string dir = farm.dir();
  std::map<std::pair<std::string, int64_t>, std::vector<uint8_t>> compiled;
  for (const std::string target : {"host", "arm-neon"}) {
    for (const int64_t n : {1024, 1003}) compiled[{target, n}] = compile_mul_add(target, n, dir);
  }
  const std::vector<uint8_t> arm_fixture = testing::read_binary(KILN_AARCH64_FARM_FIXTURE);

  std::vector<pb::Job> host_jobs, arm_jobs;
  for (int i = 0; i < 30; ++i) {
    const int64_t n = i % 2 ? 1024 : 1003;
    host_jobs.push_back(i % 3 == 0 ? testing::fixture_job("add_one", 64 + i, 10 + i)
                                   : mul_add_job(compiled[{"host", n}], n, 100 + i, 10));
  }
  for (int i = 0; i < 20; ++i) {
    const int64_t n = i % 2 ? 1024 : 1003;
    arm_jobs.push_back(
        i % 4 == 0 ? testing::fixture_job_of(arm_fixture, "add_one", 64 + i, 20 + i, true, 30)
                   : mul_add_job(compiled[{"arm-neon", n}], n, 200 + i, 30));
  }

  farm.wait_for_workers("host", 2);
  farm.wait_for_workers("arm", 1, 30);
  FarmClient client = farm.client();
  const auto t0 = std::chrono::steady_clock::now();
  auto arm_batch = client.submit("arm", arm_jobs);
  auto host_batch = client.submit("host", host_jobs);
  std::vector<pb::Result> arm_results;
  std::thread arm_wait([&] { arm_results = arm_batch->wait_all(); });
  const std::vector<pb::Result> host_results = host_batch->wait_all();
  arm_wait.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("50 jobs (30 host, 20 arm under qemu) in %.2f s\n", seconds);

  const pb::StatusReply status = client.status();
  std::string arm_worker;
  for (const auto& w : status.workers()) {
    if (w.key() == "arm") {
      arm_worker = w.worker_id();
      EXPECT_EQ(w.arch(), "aarch64") << "the ARM worker reports the machine qemu emulates";
    } else {
      EXPECT_EQ(w.key(), "host");
    }
  }
  ASSERT_FALSE(arm_worker.empty()) << farm.tracker_log();

  ASSERT_EQ(arm_results.size(), 20u);
  for (const pb::Result& r : arm_results) {
    EXPECT_EQ(r.error(), pb::OK) << describe(r) << "\n" << testing::read_text(farm.worker_log(0));
    EXPECT_EQ(r.worker_id(), arm_worker) << describe(r);
    EXPECT_EQ(r.costs_size(), static_cast<int>(arm_jobs[r.index()].repeat())) << describe(r);
    // Records must not take emulated timings for a board's: the emulator is named.
    EXPECT_EQ(r.machine().emulator(), std::filesystem::path(qemu.front()).filename().string());
    EXPECT_EQ(r.machine().features_size(), 0);
  }
  ASSERT_EQ(host_results.size(), 30u);
  std::map<std::string, int> per_host_worker;
  for (const pb::Result& r : host_results) {
    EXPECT_EQ(r.error(), pb::OK) << describe(r);
    EXPECT_NE(r.worker_id(), arm_worker) << describe(r);
    EXPECT_EQ(r.worker_id().rfind("host-", 0), 0u) << describe(r);
    EXPECT_EQ(r.costs_size(), static_cast<int>(host_jobs[r.index()].repeat())) << describe(r);
    EXPECT_TRUE(r.machine().emulator().empty()) << describe(r);
    ++per_host_worker[r.worker_id()];
  }
  EXPECT_EQ(per_host_worker.size(), 2u) << "both native workers should have served jobs";

  // A job whose .so is for the other architecture fails to load there: a build error, and the
  // ARM worker carries on.
  const auto wrong_arch =
      client
          .submit("arm", {mul_add_job(compiled[{"host", 1024}], 1024, 1, 30),
                          mul_add_job(compiled[{"arm-neon", 1024}], 1024, 2, 30)})
          ->wait_all();
  EXPECT_EQ(wrong_arch[0].error(), pb::BUILD_ERROR) << describe(wrong_arch[0]);
  EXPECT_EQ(wrong_arch[1].error(), pb::OK) << describe(wrong_arch[1]);
}

}  // namespace
}  // namespace kiln::farm
