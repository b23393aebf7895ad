// `kiln compile -o OUT` through compile_network: the model is swapped into OUT whole, a user's
// other files in OUT survive a recompile, a failed compile leaves OUT as it was (absent when
// it was) and no temporary beside it, and a file at OUT is refused untouched
// (compiler/base/output_paths.h has the folder swap's own tests:
// tests/tools/output_paths_test.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "network/artifact.h"
#include "network/compile_network.h"
#include "tests/network/test_models.h"
#include "tests/test_util.h"

namespace kiln::network::test {
namespace {

namespace fs = std::filesystem;
using kiln::test::dead_pid;
using kiln::test::inode;
using kiln::test::read_file;
using kiln::test::temporaries;

std::string relu_model() {
  graph::test::ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 4, 4, 4});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  return b.bytes();
}

std::string unsupported_model() {
  graph::test::ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 4});
  b.node("Hardmax", {"x"}, {"y"});
  b.output("y");
  return b.bytes();
}

// `bytes` written as DIR/net.onnx and compiled for the host into `out`.
void compile(const TempDir& dir, const std::string& bytes, const fs::path& out) {
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileOptions o;
  o.model_path = onnx;
  o.target = host_target();
  o.out_dir = out.string();
  compile_network(o);
}

TEST(ArtifactFolder, AFreshFolderHoldsTheModelAndNoTemporary) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  compile(dir, relu_model(), out);
  for (const std::string& f : artifact_files()) EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ArtifactFolder, ARecompileKeepsTheUsersFilesAndReplacesTheModel) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  compile(dir, relu_model(), out);
  fs::create_directories(out / "outputs");
  std::ofstream(out / "outputs" / "y.npy") << "npy";
  std::ofstream(out / "report.html") << "<html>";
  // What a kiln before the folder swap left inside OUT when killed.
  const fs::path old_temporary = out / (".kiln-compile." + std::to_string(dead_pid()));
  fs::create_directory(old_temporary);
  std::map<std::string, ino_t> before;
  for (const std::string& f : artifact_files()) before[f] = inode(out / f);

  compile(dir, relu_model(), out);
  for (const std::string& f : artifact_files())
    EXPECT_NE(inode(out / f), before[f]) << f << " is old";
  EXPECT_EQ(read_file(out / "outputs" / "y.npy"), "npy");
  EXPECT_EQ(read_file(out / "report.html"), "<html>");
  EXPECT_FALSE(fs::exists(old_temporary));
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ArtifactFolder, AFailedCompileLeavesOutAsItWas) {
  TempDir dir;
  const fs::path fresh = fs::path(dir.path()) / "fresh", out = fs::path(dir.path()) / "out";
  EXPECT_THROW(compile(dir, unsupported_model(), fresh), UserError);
  EXPECT_FALSE(fs::exists(fresh)) << "an empty folder was left";

  compile(dir, relu_model(), out);
  const ino_t so = inode(out / "model.so");
  EXPECT_THROW(compile(dir, unsupported_model(), out), UserError);
  EXPECT_EQ(inode(out / "model.so"), so);
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
  EXPECT_TRUE(temporaries(dir.path(), "fresh").empty());
}

TEST(ArtifactFolder, StaleTemporariesOfDeadCompilesAreRemovedLiveOnesKept) {
  TempDir dir;
  const fs::path parent(dir.path()), out = parent / "out";
  const fs::path dead = parent / (".out.kiln-compile." + std::to_string(dead_pid()));
  const fs::path live = parent / (".out.kiln-compile." + std::to_string(getppid()));
  const fs::path init = parent / ".out.kiln-compile.1";
  for (const fs::path& p : {dead, live, init}) {
    fs::create_directory(p);
    std::ofstream(p / "model.so") << "half";
  }
  compile(dir, relu_model(), out);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live / "model.so"));
  EXPECT_TRUE(fs::exists(init / "model.so"));
}

TEST(ArtifactFolder, AFileAtOutIsRefusedAndUntouched) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  std::ofstream(out) << "the user's notes";
  try {
    compile(dir, relu_model(), out);
    ADD_FAILURE() << "compiled over a file";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("exists and is not a folder"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_file(out), "the user's notes");
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ArtifactFolder, AParentThatIsAFileFailsWithAUserError) {
  TempDir dir;
  std::ofstream(dir.file("notes")) << "x";
  EXPECT_THROW(compile(dir, relu_model(), fs::path(dir.file("notes")) / "out"), UserError);
  EXPECT_EQ(read_file(dir.file("notes")), "x");
}

}  // namespace
}  // namespace kiln::network::test
