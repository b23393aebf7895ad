// The params file: checksum vectors, the writer's layout and atomicity, the builder's
// alignment, and the read-only mapping.
#include "kiln/params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/runtime.h"
#include "runtime/process/temp_dir.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ParamsChecksum, Fnv1a64ReferenceValues) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(params_checksum("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(params_checksum("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(params_checksum("foobar", 6), 0x85944171f73967e8ull);
  // In pieces, the same.
  EXPECT_EQ(params_checksum_update(params_checksum("foo", 3), "bar", 3), 0x85944171f73967e8ull);
}

TEST(ParamsFile, WriteThenOpen) {
  const TempDir dir("kiln-params");
  std::vector<uint8_t> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  const std::string path = dir.file("w.params");
  write_params_file(path, payload.data(), payload.size());

  const std::vector<uint8_t> bytes = read_file(path);
  ASSERT_EQ(bytes.size(), kParamsHeaderBytes + payload.size());
  EXPECT_EQ(std::memcmp(bytes.data(), "KILNPRM\0", 8), 0);
  EXPECT_EQ(bytes[8], 1);    // version, little-endian
  EXPECT_EQ(bytes[12], 64);  // payload offset
  EXPECT_EQ(bytes[16] | bytes[17] << 8, 1000);
  EXPECT_EQ(std::memcmp(bytes.data() + 64, payload.data(), payload.size()), 0);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_read, fs::perms::others_read);

  const ParamsFile f = ParamsFile::open(path);
  EXPECT_EQ(f.bytes(), payload.size());
  EXPECT_EQ(f.checksum(), params_checksum(payload.data(), payload.size()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.payload()) % kParamsAlignment, 0u);
  EXPECT_EQ(std::memcmp(f.payload(), payload.data(), payload.size()), 0);
  EXPECT_EQ(f.path(), path);
}

TEST(ParamsFile, EmptyPayload) {
  const TempDir dir("kiln-params");
  write_params_file(dir.file("e.params"), nullptr, 0);
  const ParamsFile f = ParamsFile::open(dir.file("e.params"));
  EXPECT_EQ(f.bytes(), 0u);
  EXPECT_NE(f.payload(), nullptr);
}

TEST(ParamsFile, MappingIsReadOnly) {
  const TempDir dir("kiln-params");
  const std::vector<uint8_t> payload(4096, 3);
  write_params_file(dir.file("ro.params"), payload.data(), payload.size());
  ParamsFile f = ParamsFile::open(dir.file("ro.params"));
  // The mapping outlives the file. Removing the directory now matters: a threadsafe death test
  // re-runs this test in a child that dies below, before any destructor could clean up.
  fs::remove_all(dir.path());
  // A kernel that wrote into its weights would fault, not corrupt them: the pages are PROT_READ.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(*const_cast<volatile uint8_t*>(static_cast<const uint8_t*>(f.payload())) = 1, "");
  ParamsFile moved = std::move(f);
  EXPECT_EQ(moved.bytes(), payload.size());
}

TEST(ParamsFile, WriteReplacesAtomicallyAndLeavesNoTemporaries) {
  const TempDir dir("kiln-params");
  const std::string path = dir.file("a.params");
  const std::vector<uint8_t> first(100, 1), second(200, 2);
  write_params_file(path, first.data(), first.size());
  write_params_file(path, second.data(), second.size());
  EXPECT_EQ(ParamsFile::open(path).bytes(), 200u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "a.params");
  }
  EXPECT_EQ(entries, 1);
}

TEST(ParamsFile, UnwritableDestinationIsAnIoError) {
  const std::vector<uint8_t> payload(10, 0);
  try {
    write_params_file("/nonexistent-dir/p.params", payload.data(), payload.size());
    FAIL() << "wrote into a missing directory";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/p.params"), std::string::npos);
  }
}

TEST(ParamsFile, ParseNamesTheFile) {
  const uint8_t junk[100] = {};
  try {
    parse_params(junk, sizeof junk, "weights.bin");
    FAIL() << "parsed junk";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParams);
    EXPECT_NE(std::string(e.what()).find("'weights.bin': not a kiln params file"),
              std::string::npos)
        << e.what();
  }
}

TEST(ParamsBuilder, AlignsEveryTensor) {
  ParamsBuilder b;
  const float a[3] = {1, 2, 3};
  const uint8_t c[1] = {7};
  EXPECT_EQ(b.add(a, sizeof a), 0u);
  EXPECT_EQ(b.add(c, 1), 64u);
  EXPECT_EQ(b.add(a, sizeof a), 128u);
  EXPECT_EQ(b.add(nullptr, 0), 192u);
  ASSERT_EQ(b.payload().size(), 192u);
  EXPECT_EQ(b.payload()[64], 7);
  EXPECT_EQ(b.payload()[20], 0);  // padding
  EXPECT_EQ(b.checksum(), params_checksum(b.payload().data(), b.payload().size()));
}

}  // namespace
}  // namespace kiln::testing
