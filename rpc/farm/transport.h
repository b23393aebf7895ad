// What every farm process shares about talking gRPC: the farm token (loading it, sending it,
// checking it in constant time), message size limits, and making a channel to the tracker.
// A worker runs any .so it is sent, so no token, no entry.
#ifndef KILN_RPC_FARM_TRANSPORT_H
#define KILN_RPC_FARM_TRANSPORT_H

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace kiln::farm {

inline constexpr const char* kTokenMetadata = "x-kiln-farm-token";
// The largest message either side accepts. A kernel job (a .so plus its reference outputs)
// is far below it; a whole-model job (`kiln run --farm`: model.so, model.params and the
// inputs in one message) is what sets it: ResNet-18's params hold 82 MB of Winograd weights,
// and the tracker's own cap on what it holds at once (scheduler.h) is 2 GiB.
inline constexpr int kMaxMessageBytes = 256 << 20;

// The farm token from `token_file` when given (surrounding white space trimmed), else from the
// KILN_FARM_TOKEN environment variable. Throws std::runtime_error naming the file when it
// cannot be read or the token is empty.
std::string load_token(const std::string& token_file);

// True when `a` equals `b`; the time taken does not depend on where they differ.
bool constant_time_equal(const std::string& a, const std::string& b);

// OK when the call carries `token`; else UNAUTHENTICATED (and a line on stderr, prefixed with
// `who`, naming the peer and the method).
grpc::Status check_token(const grpc::ServerContext& context, const std::string& token,
                         const char* method, const char* who = "kiln tracker");

// A channel to `address` ("HOST:PORT") with the farm's message size limits; with TLS when
// `tls_ca_file` is not empty (the PEM root certificate the tracker's certificate chains to).
std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const std::string& tls_ca_file = "");

// A client context carrying `token`, with a deadline `timeout_s` from now (none when <= 0).
void prepare_context(grpc::ClientContext& context, const std::string& token, double timeout_s);

// Seconds since the Unix epoch.
double unix_now();

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_TRANSPORT_H
