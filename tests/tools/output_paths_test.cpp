// compiler/base/output_paths.h: a folder replaced by one rename keeps the user's other files
// (hard links, same inodes), leaves no temporary behind on success or failure, removes only
// the stale temporaries of dead processes, refuses a file where the folder should be; and the
// early checks of --output / -o / --so paths.
#include "compiler/base/output_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "runtime/process/temp_dir.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::dead_pid;
using test::inode;
using test::read_file;
using test::temporaries;
using test::user_error_of;
using test::write_file;

const std::string kTag = "kiln-compile";

// A fill that writes the two files the replacement owns.
void write_model(const std::string& tmp, const std::string& version) {
  write_file(fs::path(tmp) / "model.so", "so " + version);
  write_file(fs::path(tmp) / "model.params", "params " + version);
}

FolderReplacement replacement(const fs::path& out) {
  return {out.string(), "the output folder", kTag, {"model.so", "model.params"}};
}

TEST(ReplaceFolder, AFreshFolderAppearsOnlyAtTheSwap) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  replace_folder(replacement(out), [&](const std::string& tmp) {
    EXPECT_FALSE(fs::exists(out)) << "created before the swap";
    EXPECT_EQ(tmp, temporary_folder(out.string(), kTag, getpid()));
    EXPECT_EQ(fs::path(tmp).parent_path(), out.parent_path());
    write_model(tmp, "1");
  });
  EXPECT_EQ(read_file(out / "model.so"), "so 1");
  EXPECT_EQ(read_file(out / "model.params"), "params 1");
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ReplaceFolder, AnExistingFolderKeepsTheUsersEntries) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  fs::create_directories(out / "outputs" / "deeper");
  write_model(out.string(), "old");
  write_file(out / "report.html", "<html>");
  write_file(out / "outputs" / "y.npy", "npy");
  write_file(out / "outputs" / "deeper" / "z", "z");
  fs::create_symlink("report.html", out / "link");
  fs::create_directory(out / "read-only");
  write_file(out / "read-only" / "f", "f");
  fs::permissions(out / "read-only", fs::perms::owner_read | fs::perms::owner_exec);
  fs::permissions(out, fs::perms(0750));
  const ino_t report = inode(out / "report.html"), npy = inode(out / "outputs" / "y.npy");
  const ino_t old_so = inode(out / "model.so");

  replace_folder(replacement(out), [&](const std::string& tmp) { write_model(tmp, "new"); });

  EXPECT_EQ(read_file(out / "model.so"), "so new");
  EXPECT_EQ(read_file(out / "model.params"), "params new");
  EXPECT_NE(inode(out / "model.so"), old_so);
  // The user's files are the same files (hard links), not copies.
  EXPECT_EQ(read_file(out / "report.html"), "<html>");
  EXPECT_EQ(inode(out / "report.html"), report);
  EXPECT_EQ(read_file(out / "outputs" / "y.npy"), "npy");
  EXPECT_EQ(inode(out / "outputs" / "y.npy"), npy);
  EXPECT_EQ(read_file(out / "outputs" / "deeper" / "z"), "z");
  ASSERT_TRUE(fs::is_symlink(out / "link"));
  EXPECT_EQ(fs::read_symlink(out / "link"), "report.html");
  EXPECT_EQ(read_file(out / "read-only" / "f"), "f");
  EXPECT_EQ(fs::status(out / "read-only").permissions(),
            fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_EQ(fs::status(out).permissions(), fs::perms(0750));
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
  fs::permissions(out / "read-only", fs::perms::owner_all);  // for TempDir's removal
}

TEST(ReplaceFolder, RootLeavesTheFoldersTheirOwners) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user";
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  fs::create_directories(out / "outputs");
  const uid_t nobody = 65534;
  ASSERT_EQ(::chown(out.c_str(), nobody, nobody), 0);
  ASSERT_EQ(::chown((out / "outputs").c_str(), nobody, nobody), 0);
  replace_folder(replacement(out), [&](const std::string& tmp) { write_model(tmp, "1"); });
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody);
  ASSERT_EQ(::stat((out / "outputs").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody);
}

TEST(ReplaceFolder, AnOwnedEntryOfAnotherKindIsReplacedToo) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  fs::create_directories(out / "model.so");  // a folder where the new file goes
  replace_folder(replacement(out), [&](const std::string& tmp) { write_model(tmp, "1"); });
  EXPECT_EQ(read_file(out / "model.so"), "so 1");
}

TEST(ReplaceFolder, AFailedFillLeavesTheOldFolderAndNoTemporary) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  fs::create_directories(out);
  write_model(out.string(), "old");
  write_file(out / "report.html", "<html>");
  const ino_t old_so = inode(out / "model.so");
  EXPECT_THROW(replace_folder(replacement(out),
                              [&](const std::string& tmp) {
                                write_model(tmp, "half");
                                throw std::runtime_error("the compile failed");
                              }),
               std::runtime_error);
  EXPECT_EQ(read_file(out / "model.so"), "so old");
  EXPECT_EQ(inode(out / "model.so"), old_so);
  EXPECT_EQ(read_file(out / "report.html"), "<html>");
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ReplaceFolder, AFailedFillCreatesNoFolderAtAll) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "a" / "b" / "out";
  EXPECT_THROW(
      replace_folder(replacement(out), [&](const std::string&) { throw UserError("bad model"); }),
      UserError);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "a")) << "the parents made for it stay";
}

TEST(ReplaceFolder, OnlyStaleTemporariesOfDeadProcessesAreRemoved) {
  TempDir dir;
  const fs::path parent(dir.path()), out = parent / "out";
  const std::string dead = std::to_string(dead_pid());
  const std::vector<std::string> removed = {".out.kiln-compile." + dead};
  const std::vector<std::string> kept = {
      ".out.kiln-compile." + std::to_string(getppid()),  // a live process
      ".out.kiln-compile.1",                             // init: alive
      ".out.kiln-compile.0" + dead,                      // a leading zero: not the pattern
      ".out.kiln-compile." + dead + "x",
      ".out.kiln-compilex." + dead,
      ".other.kiln-compile." + dead,  // another folder's
      "out.kiln-compile." + dead,
  };
  for (const auto& names : {removed, kept})
    for (const std::string& n : names) {
      fs::create_directory(parent / n);
      write_file(parent / n / "model.so", "x");
    }
  const fs::path file = parent / (".out.kiln-compile." + std::to_string(dead_pid()));
  write_file(file, "a file, not a folder");
  replace_folder(replacement(out), [&](const std::string& tmp) { write_model(tmp, "1"); });
  for (const std::string& n : removed) EXPECT_FALSE(fs::exists(parent / n)) << n;
  for (const std::string& n : kept) EXPECT_TRUE(fs::exists(parent / n / "model.so")) << n;
  EXPECT_EQ(read_file(file), "a file, not a folder");
}

TEST(ReplaceFolder, AFileWhereTheFolderShouldBeIsRefusedUntouched) {
  TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  write_file(out, "the user's notes");
  bool filled = false;
  const std::string msg = user_error_of(
      [&] { replace_folder(replacement(out), [&](const std::string&) { filled = true; }); });
  EXPECT_NE(msg.find("exists and is not a folder"), std::string::npos) << msg;
  EXPECT_NE(msg.find(out.string()), std::string::npos) << msg;
  EXPECT_FALSE(filled) << "work started before the check";
  EXPECT_EQ(read_file(out), "the user's notes");
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(ReplaceFolder, AParentThatIsAFileIsRefused) {
  TempDir dir;
  write_file(dir.file("notes"), "x");
  const std::string msg = user_error_of([&] {
    replace_folder(replacement(fs::path(dir.path()) / "notes" / "out"), [](const std::string&) {});
  });
  EXPECT_NE(msg.find("is not a folder"), std::string::npos) << msg;
  EXPECT_EQ(read_file(dir.file("notes")), "x");
}

TEST(ReplaceFolder, AnUnwritableParentIsRefusedBeforeTheFill) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes in any folder";
  TempDir dir;
  const fs::path locked = fs::path(dir.path()) / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  bool filled = false;
  const std::string msg = user_error_of([&] {
    replace_folder(replacement(locked / "out"), [&](const std::string&) { filled = true; });
  });
  EXPECT_NE(msg.find("cannot write in"), std::string::npos) << msg;
  EXPECT_FALSE(filled);
  fs::permissions(locked, fs::perms::owner_all);
}

TEST(ReplaceFolder, ASymbolicLinkIsFollowed) {
  TempDir dir;
  const fs::path real = fs::path(dir.path()) / "real", out = fs::path(dir.path()) / "out";
  fs::create_directory(real);
  write_file(real / "keep", "k");
  fs::create_directory_symlink("real", out);
  replace_folder(replacement(out), [&](const std::string& tmp) { write_model(tmp, "1"); });
  EXPECT_TRUE(fs::is_symlink(out));
  EXPECT_EQ(read_file(real / "model.so"), "so 1");
  EXPECT_EQ(read_file(real / "keep"), "k");
}

TEST(ReplaceFolder, ATrailingSlashNamesTheSameFolder) {
  TempDir dir;
  const std::string out = dir.path() + "/out/";
  replace_folder({out, "-o", kTag, {"model.so"}},
                 [&](const std::string& tmp) { write_model(tmp, "1"); });
  EXPECT_EQ(read_file(fs::path(dir.path()) / "out" / "model.so"), "so 1");
  EXPECT_TRUE(temporaries(dir.path(), "out").empty());
}

TEST(OutputChecks, OutputFolder) {
  TempDir dir;
  write_file(dir.file("notes"), "x");
  EXPECT_NO_THROW(check_output_folder(dir.path(), "--output"));
  EXPECT_NO_THROW(check_output_folder(dir.file("new/deeper"), "--output"));
  std::string msg = user_error_of([&] { check_output_folder(dir.file("notes"), "--output"); });
  EXPECT_NE(msg.find("--output " + dir.file("notes") + " exists and is not a folder"),
            std::string::npos)
      << msg;
  msg = user_error_of([&] { check_output_folder(dir.file("notes/sub"), "--output"); });
  EXPECT_NE(msg.find("is not a folder"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir.file("new"))) << "a check creates nothing";
}

TEST(OutputChecks, ReplaceableFolder) {
  TempDir dir;
  write_file(dir.file("notes"), "x");
  EXPECT_NO_THROW(check_replaceable_folder(dir.file("out"), "-o"));
  std::string msg = user_error_of([&] { check_replaceable_folder(dir.file("notes"), "-o"); });
  EXPECT_NE(msg.find("-o " + dir.file("notes") + " exists and is not a folder"), std::string::npos)
      << msg;
  msg = user_error_of([&] { check_replaceable_folder("/", "-o"); });
  EXPECT_NE(msg.find("root"), std::string::npos) << msg;
}

TEST(OutputChecks, OutputFile) {
  TempDir dir;
  write_file(dir.file("notes"), "x");
  EXPECT_NO_THROW(check_output_file(dir.file("k.so"), "--so"));
  EXPECT_NO_THROW(check_output_file(dir.file("notes"), "--so"));  // replaced, as today
  std::string msg = user_error_of([&] { check_output_file(dir.path(), "--so"); });
  EXPECT_NE(msg.find("is a folder"), std::string::npos) << msg;
  msg = user_error_of([&] { check_output_file(dir.file("missing/k.so"), "--so"); });
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  msg = user_error_of([&] { check_output_file(dir.file("notes/k.so"), "--so"); });
  EXPECT_NE(msg.find("is not a folder"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kiln
