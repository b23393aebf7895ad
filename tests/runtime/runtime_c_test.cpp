// The C API: status codes and kiln_last_error() instead of exceptions.
#include "kiln/runtime_c.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(RuntimeC, LoadErrorsAreStatusCodes) {
  kiln_module* m = reinterpret_cast<kiln_module*>(1);
  EXPECT_EQ(kiln_module_load("/nonexistent/libk.so", nullptr, &m), KILN_ERROR_LOAD);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("/nonexistent/libk.so"), std::string::npos);
  EXPECT_EQ(kiln_module_load(KILN_FIXTURE_NO_INIT, nullptr, &m), KILN_ERROR_LOAD);
  EXPECT_NE(std::string(kiln_last_error()).find("kiln_module_init"), std::string::npos);
  EXPECT_EQ(kiln_module_load(nullptr, nullptr, &m), KILN_ERROR_INVALID_ARGUMENT);
}

TEST(RuntimeC, PoolModuleAndCall) {
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(3, &pool), KILN_OK);
  kiln_module* m = nullptr;
  ASSERT_EQ(kiln_module_load(KILN_FIXTURE_KERNEL, pool, &m), KILN_OK) << kiln_last_error();

  int64_t n = 300, chunks = 0;
  void* count_args[] = {&n, &chunks};
  EXPECT_EQ(kiln_module_call(m, "count_chunks", count_args), KILN_OK);
  EXPECT_EQ(chunks, 3);

  int64_t bad = 5;
  void* fail_args[] = {&n, &bad};
  EXPECT_EQ(kiln_module_call(m, "fail_at", fail_args), KILN_ERROR_KERNEL);
  EXPECT_NE(std::string(kiln_last_error()).find("fail_at"), std::string::npos);

  EXPECT_EQ(kiln_module_call(m, "no_such_kernel", count_args), KILN_ERROR_SYMBOL);
  EXPECT_NE(std::string(kiln_last_error()).find("no_such_kernel"), std::string::npos);

  kiln_module_free(m);
  kiln_thread_pool_destroy(pool);
}

TEST(RuntimeC, BadThreadCount) {
  kiln_thread_pool* pool = nullptr;
  EXPECT_EQ(kiln_thread_pool_create(-2, &pool), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pool, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("-2"), std::string::npos);
}

}  // namespace
