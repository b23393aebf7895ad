// Checks of the farm subcommands' flags (kiln tracker, worker, farm status, tune --farm) made
// before any server starts or connection opens. rpc/farm reports a missing token file or
// half a TLS pair as std::runtime_error, since the lean kiln-worker knows no UserError; at
// start-up only the user's flags can be wrong, so here they become UserErrors (exit 2).
#pragma once

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

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
// Checks that the tracker can listen on HOST:PORT before gRPC tries (which would print its own
// multi-line error): HOST must resolve, and PORT (unless 0, any port) must be free.
inline void check_listen_address(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    if (found) freeaddrinfo(found);
    user_error() << "--bind '" << host << "' is not an address to listen on (" << gai_strerror(rc)
                 << ")";
  }
  int bind_errno = 0;
  if (port != 0) {
    const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    if (fd >= 0) {
      const int one = 1;  // as gRPC does: a port in TIME_WAIT is free
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) bind_errno = errno;
      close(fd);
    }
  }
  freeaddrinfo(found);
  user_check(bind_errno != EADDRINUSE)
      << "port " << port << " on " << host
      << " is already in use (another tracker?); pick another with --port";
}

}  // namespace kiln::tools
