// In-process linking: self-contained output, clean failures, and links from many threads.
#include "compiler/codegen/link.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/base/error.h"
#include "compiler/ir/op.h"

namespace kiln::codegen::testing {
namespace {

CompiledModule small_module(const std::string& name) {
  ir::Buffer a = ir::make_buffer("A", ir::DataType::i32(), {8});
  ir::Var i("i");
  ir::LoweredFunc f{name,
                    {a},
                    ir::make_for(i, 0, 8, ir::ForKind::Serial,
                                 ir::make_store(a, ir::make_cast(ir::DataType::i32(), i), {i}))};
  return compile_module({f}, target_from_name("host"));
}

TEST(Link, CorruptObjectIsAnErrorNotAnExit) {
  std::string out = temp_path("corrupt") + ".so";
  std::vector<uint8_t> junk(200, 0x5a);
  junk[0] = 0x7f, junk[1] = 'E', junk[2] = 'L', junk[3] = 'F';
  try {
    link_shared_object({junk}, out);
    FAIL() << "linked a corrupt object";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(out), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  // The linker still works afterwards.
  std::string good = temp_path("after_corrupt") + ".so";
  link_shared_object({small_module("k").object}, good);
  EXPECT_TRUE(std::filesystem::exists(good));
}

TEST(Link, DuplicateSymbolsFail) {
  CompiledModule m = small_module("dup");
  EXPECT_THROW(link_shared_object({m.object, m.object}, temp_path("dup") + ".so"), Error);
}

TEST(Link, UnwritableOutputFails) {
  EXPECT_THROW(link_shared_object({small_module("k").object}, "/nonexistent-dir/x.so"), Error);
}

TEST(Link, ConcurrentLinksAreSerialised) {
  std::vector<std::thread> threads;
  std::vector<std::string> paths(6);
  std::atomic<int> failures{0};
  for (size_t t = 0; t < paths.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        paths[t] = temp_path("conc") + ".so";
        CompiledModule m = small_module(numbered("k", t));  // codegen in parallel too
        link_shared_object({m.object}, paths[t]);
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  for (size_t t = 0; t < paths.size(); ++t) {
    LoadedModule m(paths[t]);
    std::vector<int32_t> a(8, -1);
    ASSERT_EQ(m.call(numbered("k", t), {a.data()}), 0);
    EXPECT_EQ(a[7], 7);
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
