// The params file: checksum vectors, the writer's layout and atomicity, the builder's
// alignment, and the read-only mapping.
#include "kiln/params.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
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

// The checksum as params.h defines it, written the slow, obvious way.
uint64_t fnv(uint64_t h, uint64_t value) { return (h ^ value) * 0x100000001b3ull; }
uint64_t reference_chunk(const uint8_t* p, size_t n) {
  const uint64_t seed = 0xcbf29ce484222325ull;
  uint64_t lane[8];
  for (uint64_t j = 0; j < 8; ++j) lane[j] = seed ^ j;
  const size_t blocks = n / 64;
  for (size_t b = 0; b < blocks; ++b)
    for (int j = 0; j < 8; ++j) {
      uint64_t word = 0;
      for (int k = 7; k >= 0; --k) word = word << 8 | p[b * 64 + 8 * j + k];
      lane[j] = fnv(lane[j], word);
    }
  for (size_t i = blocks * 64; i < n; ++i) lane[0] = fnv(lane[0], p[i]);
  uint64_t h = seed ^ n;
  for (uint64_t l : lane) h = fnv(h, l);
  return h;
}
uint64_t reference_checksum(const std::vector<uint8_t>& payload) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t at = 0; at < payload.size(); at += kParamsChecksumChunkBytes)
    h = fnv(h, reference_chunk(payload.data() + at,
                               std::min(kParamsChecksumChunkBytes, payload.size() - at)));
  return fnv(h, payload.size());
}

TEST(ParamsChecksum, MatchesTheDefinitionAtEverySizeAroundBlocksAndChunks) {
  const size_t chunk = kParamsChecksumChunkBytes;
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(63), size_t(64), size_t(65),
                   size_t(100), size_t(1000), chunk - 1, chunk, chunk + 1, 3 * chunk + 77}) {
    std::vector<uint8_t> payload(n);
    for (size_t i = 0; i < n; ++i) payload[i] = static_cast<uint8_t>(i * 131 + 7);
    EXPECT_EQ(params_checksum(payload.data(), n), reference_checksum(payload)) << n << " bytes";
  }
}

TEST(ParamsChecksum, TheChunkTableHoldsEachChunksDigestAndCombinesIntoTheChecksum) {
  const size_t chunk = kParamsChecksumChunkBytes;
  for (size_t n : {size_t(0), size_t(5), chunk, 3 * chunk + 3}) {
    std::vector<uint8_t> payload(n);
    for (size_t i = 0; i < n; ++i) payload[i] = static_cast<uint8_t>(i * 37 + (i >> 12));
    const std::vector<uint8_t> table = params_chunk_table(payload.data(), n);
    ASSERT_EQ(table.size(), 8 * params_chunk_count(n));
    for (size_t k = 0; k < table.size() / 8; ++k) {
      uint64_t d = 0;
      for (int i = 7; i >= 0; --i) d = d << 8 | table[8 * k + i];
      EXPECT_EQ(d, reference_chunk(payload.data() + k * chunk, std::min(chunk, n - k * chunk)));
    }
    EXPECT_EQ(params_checksum_of_table(table.data(), table.size() / 8, n),
              params_checksum(payload.data(), n))
        << n << " bytes";
  }
}

TEST(ParamsChecksum, FirstBadChunkOnAPoolAndSerially) {
  const size_t chunk = kParamsChecksumChunkBytes, n = 70 * chunk + 3;
  std::vector<uint8_t> payload(n);
  for (size_t i = 0; i < n; ++i) payload[i] = static_cast<uint8_t>(i * 37 + (i >> 12));
  const std::vector<uint8_t> table = params_chunk_table(payload.data(), n);
  ThreadPool pool(3);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    EXPECT_EQ(params_first_bad_chunk(payload.data(), n, table.data(), 0, 71, p), 71u);
    EXPECT_EQ(params_first_bad_chunk(payload.data(), n, table.data(), 5, 9, p), 9u);
    payload[66 * chunk + 1] ^= 4;  // past the first batch of 64
    EXPECT_EQ(params_first_bad_chunk(payload.data(), n, table.data(), 0, 71, p), 66u);
    EXPECT_EQ(params_first_bad_chunk(payload.data(), n, table.data(), 0, 66, p), 66u);
    payload[66 * chunk + 1] ^= 4;
  }
}

TEST(ParamsChecksum, EveryByteAndPositionCounts) {
  std::vector<uint8_t> payload(160, 0);
  const uint64_t base = params_checksum(payload.data(), payload.size());
  for (size_t i = 0; i < payload.size(); ++i) {
    payload[i] = 1;
    EXPECT_NE(params_checksum(payload.data(), payload.size()), base) << "byte " << i;
    payload[i] = 0;
  }
  // Two words swapped between lanes change it too.
  payload[0] = 1;
  std::vector<uint8_t> swapped(160, 0);
  swapped[8] = 1;
  EXPECT_NE(params_checksum(payload.data(), 160), params_checksum(swapped.data(), 160));
  // So does the length alone (trailing zero bytes).
  EXPECT_NE(params_checksum(payload.data(), 159), params_checksum(payload.data(), 160));
}

TEST(ParamsFile, WriteThenOpen) {
  const TempDir dir("kiln-params");
  std::vector<uint8_t> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  const std::string path = dir.file("w.params");
  write_params_file(path, payload.data(), payload.size());

  const std::vector<uint8_t> bytes = read_file(path);
  ASSERT_EQ(bytes.size(), kParamsHeaderBytes + payload.size() + 8);  // one chunk's digest
  EXPECT_EQ(std::memcmp(bytes.data(), "KILNPRM\0", 8), 0);
  EXPECT_EQ(bytes[8], 4);    // version, little-endian
  EXPECT_EQ(bytes[12], 64);  // payload offset
  EXPECT_EQ(bytes[16] | bytes[17] << 8, 1000);
  EXPECT_EQ(std::memcmp(bytes.data() + 64, payload.data(), payload.size()), 0);
  const std::vector<uint8_t> table = params_chunk_table(payload.data(), payload.size());
  EXPECT_EQ(std::memcmp(bytes.data() + 64 + payload.size(), table.data(), 8), 0);
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

// A three-chunk params file image with `edit` applied.
std::vector<uint8_t> edited_image(const std::function<void(std::vector<uint8_t>&)>& edit) {
  const TempDir dir("kiln-params");
  std::vector<uint8_t> payload(2 * kParamsChecksumChunkBytes + 100);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 13);
  write_params_file(dir.file("p.params"), payload.data(), payload.size());
  std::vector<uint8_t> image = read_file(dir.file("p.params"));
  edit(image);
  return image;
}

void expect_refused(const std::vector<uint8_t>& image, ParamsCheck check,
                    std::initializer_list<const char*> words) {
  try {
    parse_params(image.data(), image.size(), "p.params", nullptr, check);
    FAIL() << "accepted";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParams);
    for (const char* w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(ParamsFile, ACorruptChunkIsNamedAndATableOnlyCheckLeavesItToTheCaller) {
  const size_t in_chunk_1 = kParamsHeaderBytes + kParamsChecksumChunkBytes + 9;
  const std::vector<uint8_t> image = edited_image([&](auto& b) { b[in_chunk_1] ^= 0x40; });
  expect_refused(image, ParamsCheck::kWhole,
                 {"checksum mismatch in chunk 1", "corrupt"});
  const ParamsView v = parse_params(image.data(), image.size(), "p.params", nullptr,
                                    ParamsCheck::kTableOnly);
  EXPECT_EQ(params_first_bad_chunk(v.payload, v.bytes, v.chunk_table, 0, 3, nullptr), 1u);
  EXPECT_EQ(params_first_bad_chunk(v.payload, v.bytes, v.chunk_table, 2, 3, nullptr), 3u);
}

TEST(ParamsFile, ATableThatDoesNotMatchTheHeaderIsRefusedEvenUnread) {
  const size_t table_at = kParamsHeaderBytes + 2 * kParamsChecksumChunkBytes + 100;
  for (ParamsCheck check : {ParamsCheck::kWhole, ParamsCheck::kTableOnly}) {
    expect_refused(edited_image([&](auto& b) { b[table_at + 8] ^= 1; }), check,
                   {"the chunk table does not combine to the header", "corrupt"});
    expect_refused(edited_image([&](auto& b) { b.resize(b.size() - 8); }), check,
                   {"truncated", "24-byte chunk table"});
    expect_refused(edited_image([&](auto& b) { b.push_back(0); }), check, {"size mismatch"});
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
