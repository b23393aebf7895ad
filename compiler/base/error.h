// Two kinds of failure, kept apart as Halide and LLVM do:
//  - UserError: the input is wrong (a schedule, a shape, a target name). The message says
//    what is wrong and what would be valid. Raised with `user_error() << ...`.
//  - InternalError: kiln itself is wrong. Raised with `internal_check(cond) << ...`.
// Both are exceptions derived from kiln::Error so a CLI can print them cleanly.
#pragma once

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct UserError : Error {
  using Error::Error;
};
struct InternalError : Error {
  using Error::Error;
};

namespace detail {
// Collects a message with operator<< and throws when the statement ends. The stream exists
// only when the check fails: checks sit on the IR's hot paths (every node built), and
// constructing an ostringstream (a locale and its facets) per passing check was two thirds
// of the tuner's featurising time.
template <typename E>
class ErrorStream {
 public:
  ErrorStream(bool fire, const char* prefix) {
    if (fire) os_.emplace() << prefix;
  }
  ErrorStream(const ErrorStream&) = delete;
  ~ErrorStream() noexcept(false) {
    if (os_ && !std::uncaught_exceptions()) throw E(os_->str());
  }
  template <typename T>
  ErrorStream& operator<<(const T& v) {
    if (os_) *os_ << v;
    return *this;
  }

 private:
  std::optional<std::ostringstream> os_;
};
}  // namespace detail

// `user_error() << "vectorize needs a constant extent, got " << e;`
inline detail::ErrorStream<UserError> user_error() { return {true, ""}; }
// `user_check(ok) << "...";` throws a UserError when ok is false.
inline detail::ErrorStream<UserError> user_check(bool ok) { return {!ok, ""}; }
inline detail::ErrorStream<InternalError> internal_check(bool ok) {
  return {!ok, "internal error (a kiln bug): "};
}
inline detail::ErrorStream<InternalError> internal_error() {
  return {true, "internal error (a kiln bug): "};
}

}  // namespace kiln
