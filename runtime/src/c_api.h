// Private to the runtime: how every C API function turns C++ failures into a status code and
// the thread's last-error message (runtime_c.h), so that no exception reaches a C caller.
#pragma once

#include <exception>
#include <new>

#include "kiln/runtime.h"
#include "kiln/runtime_c.h"

namespace kiln::c_api {

// Stores `message` as this thread's last error and returns `code`.
kiln_status fail(kiln_status code, const char* message) noexcept;

// Runs `body`, mapping whatever it throws to a status code.
template <typename F>
kiln_status guarded(F&& body) noexcept {
  try {
    body();
    return KILN_OK;
  } catch (const RuntimeError& e) {
    return fail(static_cast<kiln_status>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(KILN_ERROR_INTERNAL, "kiln: out of memory");
  } catch (const std::exception& e) {
    return fail(KILN_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(KILN_ERROR_INTERNAL, "kiln: unknown exception");
  }
}

}  // namespace kiln::c_api
