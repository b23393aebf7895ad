// The real `kiln` binary, run as a child process on a table of bad invocations across every
// subcommand: each must exit with status 2 after writing exactly one line to stderr (what is
// wrong), never die by a signal; and --help of every subcommand exits 0. {dir} in a case
// stands for a scratch folder holding the fixtures (a malformed ONNX file, a bad log, ...).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/process/spawn.h"
#include "runtime/process/temp_dir.h"

namespace kiln::tools {
namespace {

struct Invocation {
  std::string args;      // split at spaces; {dir} is the fixtures' folder
  std::string expected;  // a part of the stderr line ("" when any message will do)
};

// clang-format off
const std::vector<Invocation> kBad = {
    // the command line itself
    {"", "subcommand is required"},
    {"bogus", ""},
    {"--frobnicate", ""},
    // demo
    {"demo --target arm-sve", "unknown target 'arm-sve'"},
    {"demo --threads 0", "--threads"},
    {"demo --repeat -1", "--repeat"},
    {"demo --bogus", "--bogus"},
    // quantize: the model, the calibration folder and the output
    {"quantize missing.onnx --calibration samples -o q.onnx", "missing.onnx: cannot read"},
    {"quantize m.onnx -o q.onnx", "--calibration is required"},
    {"quantize m.onnx --calibration samples -o /nonexistent-folder/q.onnx", "-o"},
    // inspect: the workload
    {"inspect", "--op is required"},
    {"inspect --op dense", ""},
    {"inspect --op dense --shape 4,4", "takes 3 numbers (M,N,K), got 2"},
    {"inspect --op dense --shape 4,4,4,", "not a comma-separated list"},
    {"inspect --op dense --shape 4,,4", "is not an integer"},
    {"inspect --op dense --shape a,b,c", "'a' is not an integer"},
    {"inspect --op dense --shape 0,4,4", "M = 0 must be positive"},
    {"inspect --op dense --shape -1,4,4", "must be positive"},
    {"inspect --op dense --shape 99999999999999999999,4,4", "out of range"},
    {"inspect --op dense --shape 4294967296,4294967297,4",
     "more elements than int64 holds (the product overflows at dimension 1 = 4294967297, parameter N)"},
    {"inspect --op dense --shape 2199023255552,4,4", "parameter M = 2199023255552 is out of range"},
    {"inspect --op dense --shape 4,4,4 --target arm-sve", "unknown target"},
    {"inspect --op dense --shape 4,4,4 --dtype f8", "unknown data type 'f8'"},
    {"inspect --op dense --shape 4,4,4 --dtype i16", "dtype i16 is not supported"},
    {"inspect --op dense --shape 4,4,4 --template nope", "unknown schedule template 'nope'"},
    {"inspect --op dense --shape 4,4,4 --template conv2d.nchwc", "implements conv2d, not dense"},
    {"inspect --op frobnicate --param X=3", "no schedule template implements"},
    {"inspect --op dense --shape 4,4,4 --epilogue bias,bias", "'bias' is given twice"},
    {"inspect --op dense --shape 4,4,4 --epilogue softplus", "unknown epilogue 'softplus'"},
    {"inspect --op dense --shape 4,4,4 --epilogue bias,", "an empty step"},
    {"inspect --op dense --shape 4,4,4 --param M=5", "--param M is already set"},
    {"inspect --op dense --shape 4,4,4 --param X", "is not NAME=VALUE"},
    {"inspect --op dense --shape 4,4,4 --param X=1.5", "is not an integer"},
    {"inspect --op dense --shape 4,4,4 --param X=-1", "shape parameter X = -1 is negative"},
    {"inspect --op relu --param rank=1", "missing shape parameter 'a0'"},
    {"inspect --op relu --param rank=1 --param a0=0", "must be positive"},
    // inspect: attributes
    {"inspect --op conv2d --shape 1,8,8,8,8,3,3 --stride 0", "--stride 0 is out of range"},
    {"inspect --op conv2d --shape 1,8,8,8,8,3,3 --pad -1", "--pad -1 is out of range"},
    {"inspect --op conv2d --shape 1,8,8,8,8,3,3 --groups 0", "--groups 0 is out of range"},
    {"inspect --op conv2d --shape 1,8,8,8,8,3,3 --groups 3", "groups"},
    {"inspect --op conv2d --shape 1,8,8,8,8,3,3 --dilation 0", "--dilation 0 is out of range"},
    {"inspect --op conv2d --shape 1,8,2,2,8,5,5", "is larger than the padded 2x2 input"},
    {"inspect --op max_pool2d --shape 1,8,8,8,3,3 --stride 0", "--stride 0 is out of range"},
    {"inspect --op max_pool2d --shape 1,8,8,8,3,3 --groups 2", "--groups does not apply to max_pool2d"},
    {"inspect --op dense --shape 4,4,4 --stride 2", "--stride does not apply to dense"},
    {"inspect --op dense --shape 4,4,4 --threads 0", "--threads"},
    {"inspect --op dense --shape 4,4,4 --threads many", "--threads"},
    {"inspect --op dense --shape 4,4,4 --repeat 0", "--repeat"},
    {"inspect --op dense --shape 4,4,4 --emit png", "--emit"},
    // inspect: configs, records, outputs
    {"inspect --op dense --shape 8,8,8 --analyze --run", "--analyze predicts and --run measures"},
    // analyze: the model
    {"analyze {dir}/missing.onnx --target cortex-a72", "missing.onnx"},
    {"analyze {dir}/bad.onnx --target arm-sve", "unknown target"},
    {"analyze {dir}/bad.onnx --threads 0", "--threads"},
    {"inspect --op dense --shape 4,4,4 --config not-json", "is not a JSON object"},
    {"inspect --op dense --shape 4,4,4 --config [1,2]", "is not a JSON object"},
    {"inspect --op dense --shape 4,4,4 --config {\"MR\":2}", "'MR'"},
    {"inspect --op dense --shape 4,4,4 --config {\"mr\":3}", "knob 'mr' = 3 is not one of its choices"},
    {"inspect --op dense --shape 4,4,4 --config {\"mr\":\"x\"}", "mr"},
    {"inspect --op dense --shape 4,4,4 --records {dir}/missing.jsonl", "missing.jsonl"},
    {"inspect --op dense --shape 4,4,4 --records {dir}/bad.jsonl --template dense.packed",
     "--records chooses the template and config"},
    {"inspect --op dense --shape 4,4,4 --so {dir}/missing-dir/k.so", "does not exist"},
    {"inspect --op dense --shape 4,4,4 --so {dir}/empty-dir", "is a folder"},
    {"inspect --op dense --shape 4,4,4 --so {dir}/notes.txt/k.so", "is not a folder"},
    {"inspect --op dense --shape 4,4,4 --run --target arm-neon --runner {dir}/missing-runner",
     "not an executable file"},
    // a relu of 2^32 x 16 elements: the run's memory is refused before anything is allocated
    {"inspect --op relu --param rank=2 --param a0=4294967296 --param a1=16 --run",
     "a [4294967296, 16], out [4294967296, 16], but only"},
    // tune
    {"tune --op dense --shape 4,4,4", "--log is required"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --trials -5", "--trials"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --trials 0", "--trials"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --trials lots", "--trials"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --tuner annealing", "--tuner"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --features deep", "--features"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --target arm-sve", "unknown target"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --template nope", "unknown schedule template"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --batch 0", "--batch"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --layout-choices 2", "--layout-choices"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --layout-choices 9", "--layout-choices"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --timeout 0", "--timeout"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --seed -1", "--seed"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --early-stopping -3", "--early-stopping"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --workers 999", "--workers"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --farm 127.0.0.1:1", "--farm needs --key"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --farm 127.0.0.1:1 --key x --token-file {dir}/missing-token",
     "cannot read token file"},
    {"tune --op dense --shape 4,4,4 --log {dir}/t.jsonl --transfer {dir}/missing.jsonl", "missing.jsonl"},
    {"tune --op dense --shape 4,4,4 --log {dir}/missing-dir/t.jsonl", "missing-dir"},
    {"tune --op conv2d --shape 1,8,8,8,8,3,3 --log {dir}/t.jsonl --pad -2", "--pad -2 is out of range"},
    // a --log that is not a log (even the model being tuned) is refused, never truncated
    {"tune --op dense --shape 16,16,16 --trials 2 --log {dir}/bad.onnx", "is not a kiln records log"},
    {"tune --op dense --shape 16,16,16 --trials 2 --log {dir}/p.jsonl --runner analyze --farm 127.0.0.1:1 --key k",
     "--runner analyze predicts every time here"},
    {"tune --op dense --shape 16,16,16 --trials 2 --log {dir}/p.jsonl --runner board", "--runner"},
    {"tune --op dense --shape 16,16,16 --trials 2 --log {dir}/bad.jsonl", "is not a kiln records log"},
    {"tune --op dense --shape 16,16,16 --trials 2 --log {dir}/empty-dir", "Is a directory"},
    // records
    {"records", "subcommand is required"},
    {"records summary", ""},
    {"records summary {dir}/missing.jsonl", "missing.jsonl"},
    {"records best {dir}/missing.jsonl", "missing.jsonl"},
    {"records merge {dir}/empty.jsonl", "-o"},
    {"records merge {dir}/empty.jsonl -o {dir}/missing-dir/out.jsonl", "missing-dir"},
    {"records plot {dir}/empty.jsonl", "-o"},
    {"records frobnicate {dir}/empty.jsonl", ""},
    // compile
    {"compile", ""},
    {"compile {dir}/missing.onnx -o {dir}/out", "missing.onnx"},
    {"compile {dir}/bad.onnx -o {dir}/out", "bad.onnx"},
    {"compile {dir}/empty.onnx -o {dir}/out", "empty.onnx"},
    {"compile {dir}/bad.onnx", "--output is required"},
    {"compile {dir}/bad.onnx -o {dir}/out --target arm-sve", "unknown target"},
    {"compile {dir}/bad.onnx -o {dir}/out --input-shape input", "input"},
    {"compile {dir}/bad.onnx -o {dir}/out --input-shape input=1,2x", "input=1,2x"},
    {"compile {dir}/bad.onnx -o {dir}/out --input-shape input=1,3,8,8 --input-shape input=2,3,8,8",
     "contradicting input shapes: 'input' is bound to [1,3,8,8] and to [2,3,8,8]"},
    {"compile {dir}/bad.onnx -o {dir}/out --input-shape batch=1 --input-shape batch=2",
     "contradicting input shapes"},
    {"tune {dir}/bad.onnx --log {dir}/t.jsonl --input-shape batch=1 --input-shape batch=2",
     "contradicting input shapes"},
    {"compile {dir}/bad.onnx -o {dir}/out --records {dir}/missing.jsonl", ""},
    {"compile {dir}/bad.onnx -o {dir}/out --dtype f64", "--dtype 'f64' is not supported (valid: f32, bf16, f16; kiln compile: int8)"},
    // --dtype int8: the calibration folder, and its flags only with it
    {"compile {dir}/bad.onnx -o {dir}/out --dtype int8", "--dtype int8 needs --calibration DIR"},
    {"compile {dir}/missing.onnx -o {dir}/out --dtype int8 --calibration {dir}", "missing.onnx: cannot read"},
    {"compile {dir}/bad.onnx -o {dir}/out --calibration {dir}", "--calibration (without --max-error), --keep-float, --percentile and --entropy are for --dtype int8"},
    // --max-error: its samples, a sane budget, records to choose from, one batch size
    {"compile {dir}/bad.onnx -o {dir}/out --max-error 0.01", "--max-error needs --calibration DIR"},
    {"compile {dir}/bad.onnx -o {dir}/out --max-error -1 --calibration {dir}", "--max-error -1: a relative error, 0 or more"},
    {"compile {dir}/bad.onnx -o {dir}/out --max-error inf --calibration {dir}", "a relative error, 0 or more"},
    {"compile {dir}/bad.onnx -o {dir}/out --max-error 0.01 --calibration {dir}", "give --records"},
    {"compile {dir}/bad.onnx -o {dir}/out --max-error 0.01 --calibration {dir} --records {dir}/r.jsonl --range batch=1..4", "--max-error is not yet taken with --range"},
    {"compile {dir}/bad.onnx -o {dir}/out --max-error 0.01 --calibration {dir} --records {dir}/r.jsonl", "bad.onnx"},
    {"compile {dir}/bad.onnx -o {dir}/out --dtype int8 --max-error 0.01 --calibration {dir} --records {dir}/r.jsonl", "not against the float model: quantize first"},
    {"compile {dir}/bad.onnx -o {dir}/out --keep-float conv1", "are for --dtype int8"},
    {"compile {dir}/bad.onnx -o {dir}/out --percentile 99.9", "are for --dtype int8"},
    {"compile {dir}/bad.onnx -o {dir}/out --entropy", "are for --dtype int8"},
    {"quantize {dir}/bad.onnx --calibration {dir} --percentile 99 --entropy -o {dir}/q.onnx", "--percentile and --entropy: choose one"},
    {"tune {dir}/bad.onnx --log {dir}/t.jsonl --dtype int8", "give this command the quantized model"},
    // an -o that cannot become the model folder is refused before the model is even read
    {"compile {dir}/bad.onnx -o {dir}/notes.txt", "exists and is not a folder"},
    {"compile {dir}/bad.onnx -o {dir}/notes.txt/out", "is not a folder"},
    {"tune {dir}/bad.onnx --log {dir}/t.jsonl --dtype i8", "--dtype 'i8' is not supported"},
    // run
    {"run", ""},
    {"run {dir}/missing-dir --input x={dir}/token", "is not a folder"},
    {"run {dir}/empty-dir --input x={dir}/token", "model.so"},
    {"run {dir}/empty-dir", "--input is required"},
    {"run {dir}/empty-dir --input x={dir}/token --input x={dir}/token", "--input x is given twice"},
    {"run {dir}/empty-dir --input x=", "expected NAME=FILE"},
    {"run {dir}/empty-dir --input =file", "expected NAME=FILE"},
    {"run {dir}/empty-dir --input x={dir}/token --runs 0", "--runs"},
    {"run {dir}/empty-dir --input x={dir}/token --threads -1", "--threads"},
    {"run {dir}/empty-dir --input x={dir}/token --key arm", "--key and --token-file go with --farm"},
    {"run {dir}/empty-dir --input x={dir}/token --farm 127.0.0.1:1", "--farm needs --key KEY"},
    {"run {dir}/empty-dir --input x={dir}/token --farm 127.0.0.1:1 --key k --profile {dir}/p",
     "cannot be combined with --farm"},
    {"run {dir}/empty-dir --input x={dir}/token --farm 127.0.0.1:1 --key k", "model.json"},
    {"run {dir}/empty-dir --input x={dir}/token --farm 127.0.0.1:1 --key k --timeout 0",
     "--timeout"},
    // an --output that cannot be written is refused before the model loads (or goes to a board)
    {"run {dir}/empty-dir --input x={dir}/token --output {dir}/notes.txt", "exists and is not a folder"},
    {"run {dir}/empty-dir --input x={dir}/token --output {dir}/notes.txt/outputs", "is not a folder"},
    {"run {dir}/empty-dir --input x={dir}/token --farm 127.0.0.1:1 --key k --output {dir}/notes.txt",
     "exists and is not a folder"},
#ifdef KILN_WITH_FARM
    // the farm: refused before any server starts or connection opens
    {"tracker --port 70000 --token-file {dir}/token", "--port"},
    {"tracker --port -1 --token-file {dir}/token", "--port"},
    {"tracker --port 0 --token-file {dir}/missing-token", "cannot read token file"},
    {"tracker --port 0", "no farm token"},
    {"tracker --port 0 --token-file {dir}/token --bind not-an-address!", "--bind 'not-an-address!'"},
    {"tracker --port 0 --token-file {dir}/token --heartbeat-timeout -1", "--heartbeat-timeout"},
    {"tracker --port 0 --token-file {dir}/token --tls-cert {dir}/missing.pem", "TLS needs both"},
    {"worker", "no farm token"},
    {"worker --tracker 127.0.0.1:9 --key x86 --token-file {dir}/missing-token", "cannot read token file"},
    {"worker --tracker 127.0.0.1:9 --listen 127.0.0.1:0 --token-file {dir}/token", "excludes"},
    {"farm", "subcommand is required"},
    {"farm status", "--farm is required"},
    {"farm status --farm 127.0.0.1:9 --token-file {dir}/missing-token", "cannot read token file"},
    {"farm frobnicate", ""},
#endif
};
// clang-format on

void PrintTo(const Invocation& c, std::ostream* os) { *os << "kiln " << c.args; }

const std::vector<std::string> kSubcommands = {
    "demo", "inspect", "analyze", "tune", "records", "records summary", "records best", "records merge",
    "records plot", "compile", "run",
#ifdef KILN_WITH_FARM
    "tracker", "worker", "farm", "farm status",
#endif
};

struct Exit {
  int status = -1;  // waitpid's
  std::string out, err;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixtures every case may name, in one scratch folder per test.
class Fixtures {
 public:
  Fixtures() : dir_("kiln-bad-invocations") {
    std::ofstream(dir_.file("bad.onnx")) << "garbage\x01\x02 not a protobuf";
    std::ofstream(dir_.file("empty.onnx"));
    std::ofstream(dir_.file("bad.jsonl")) << "{\"not\":\"a record\"}\nxx\n";
    std::ofstream(dir_.file("empty.jsonl"));
    std::ofstream(dir_.file("token")) << "secret\n";
    std::ofstream(dir_.file("notes.txt")) << "a user's file where an output folder is named\n";
    std::filesystem::create_directory(dir_.file("empty-dir"));
  }
  std::string dir() const { return dir_.path(); }

 private:
  TempDir dir_;
};

// Runs kiln with `args` ({dir} replaced), without a farm token in its environment, killing
// it after 60 s.
Exit run_kiln(const std::string& args, const std::string& dir) {
  std::vector<std::string> argv = {KILN_BIN};
  std::istringstream words(args);
  for (std::string w; words >> w;) {
    for (size_t at; (at = w.find("{dir}")) != std::string::npos;) w.replace(at, 5, dir);
    argv.push_back(w);
  }
  unsetenv("KILN_FARM_TOKEN");
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const pid_t pid = spawn_in_own_group(argv, out, err);
  Exit e;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (waitpid(pid, &e.status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &e.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  e.out = read_all(out);
  e.err = read_all(err);
  return e;
}

class BadInvocation : public ::testing::TestWithParam<Invocation> {};

TEST_P(BadInvocation, ExitsTwoWithOneLineOnStderr) {
  Fixtures f;
  const Invocation& c = GetParam();
  Exit e = run_kiln(c.args, f.dir());
  SCOPED_TRACE("kiln " + c.args + "\nstderr: " + e.err);
  ASSERT_FALSE(WIFSIGNALED(e.status)) << "killed by signal " << WTERMSIG(e.status);
  ASSERT_TRUE(WIFEXITED(e.status));
  EXPECT_EQ(WEXITSTATUS(e.status), 2);
  ASSERT_FALSE(e.err.empty());
  EXPECT_EQ(e.err.find('\n'), e.err.size() - 1) << "not exactly one line";
  EXPECT_EQ(e.err.rfind("kiln: error: ", 0), 0u);
  EXPECT_EQ(e.err.find("kiln:", 1), std::string::npos) << "a second \"kiln:\" in the line";
  EXPECT_NE(e.err.find(c.expected), std::string::npos) << "expected: " << c.expected;
}

std::string case_name(const ::testing::TestParamInfo<Invocation>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.args.substr(0, 40);
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kiln, BadInvocation, ::testing::ValuesIn(kBad), case_name);

TEST(BadInvocations, TheTableIsLargeEnough) { EXPECT_GE(kBad.size(), 50u); }

#ifdef KILN_WITH_FARM
TEST(BadInvocations, ATrackerOnAPortInUseIsRefused) {
  // A listening socket holds a port, as another tracker would.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  Fixtures f;
  Exit e = run_kiln("tracker --port " + port + " --token-file {dir}/token", f.dir());
  close(fd);
  SCOPED_TRACE("stderr: " + e.err);
  ASSERT_TRUE(WIFEXITED(e.status));
  EXPECT_EQ(WEXITSTATUS(e.status), 2);
  EXPECT_EQ(e.err.find('\n'), e.err.size() - 1) << "not exactly one line";
  EXPECT_NE(e.err.find("already in use"), std::string::npos);
}
#endif

class Help : public ::testing::TestWithParam<std::string> {};

TEST_P(Help, ExitsZeroAndPrintsUsage) {
  Fixtures f;
  Exit e = run_kiln(GetParam() + " --help", f.dir());
  ASSERT_TRUE(WIFEXITED(e.status));
  EXPECT_EQ(WEXITSTATUS(e.status), 0) << e.err;
  EXPECT_NE(e.out.find("Usage"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("--help"), std::string::npos) << e.out;
}

INSTANTIATE_TEST_SUITE_P(Kiln, Help, ::testing::ValuesIn(kSubcommands),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace kiln::tools
