// Checks of the farm subcommands' flags (kiln tracker, worker, farm status, tune --farm) made
// before any server starts or connection opens. rpc/farm reports a missing token file or
// half a TLS pair as std::runtime_error, since the lean kiln-worker knows no UserError; at
// start-up only the user's flags can be wrong, so here they become UserErrors (exit 2).
#pragma once

#include <netdb.h>

#include <stdexcept>
#include <string>

#include "compiler/base/error.h"

namespace kiln::tools {

// f(), with a std::runtime_error it throws rethrown as a UserError of the same message.
template <typename F>
auto as_user_error(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    user_error() << e.what();
    throw;  // not reached: user_error() throws
  }
}

// UserError unless `host` is an address or name this machine can resolve (what --bind takes).
inline void check_bind_address(const std::string& host) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found) freeaddrinfo(found);
  user_check(rc == 0) << "--bind '" << host << "' is not an address to listen on ("
                      << gai_strerror(rc) << ")";
}

}  // namespace kiln::tools
