// Farm token handling, channels and limits.
#include "rpc/farm/transport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "runtime/process/file_bytes.h"

namespace kiln::farm {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The whole of a file the user named as `what`; std::runtime_error naming it and why not.
std::string read_named_file(const std::string& what, const std::string& path) {
  try {
    return read_file_bytes(path);
  } catch (const std::system_error& e) {
    throw std::runtime_error("cannot read " + what + " '" + path + "': " + e.code().message());
  }
}

}  // namespace

std::string load_token(const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    token = trim(read_named_file("token file", token_file));
    if (token.empty()) throw std::runtime_error("token file '" + token_file + "' is empty");
    return token;
  }
  const char* env = std::getenv("KILN_FARM_TOKEN");
  token = trim(env ? env : "");
  if (token.empty()) {
    throw std::runtime_error("no farm token: pass --token-file FILE or set KILN_FARM_TOKEN");
  }
  return token;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  // Walk the whole of the longer string whatever the contents, folding differences in.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

grpc::Status check_token(const grpc::ServerContext& context, const std::string& token,
                         const char* method, const char* who) {
  const auto& md = context.client_metadata();
  const auto it = md.find(kTokenMetadata);
  const bool present = it != md.end();
  if (present && constant_time_equal(std::string(it->second.data(), it->second.size()), token)) {
    return grpc::Status::OK;
  }
  std::fprintf(stderr, "%s: rejected %s from %s: %s farm token\n", who, method,
               context.peer().c_str(), present ? "wrong" : "missing");
  return {grpc::StatusCode::UNAUTHENTICATED, present ? "wrong farm token" : "missing farm token"};
}

std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const std::string& tls_ca_file) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Reconnect quickly after a tracker restart instead of backing off for minutes: gRPC's own
  // jittered backoff starts at 100 ms and is capped at 1 s (the farm's retry loops above it
  // pace themselves with backoff.h). gRPC 1.51 also lets a connection attempt made while the
  // tracker was down run out its connect timeout before the next one starts: with the default
  // a client reached a tracker that had come back only after 10-11 s; with 2 s, after 4-6 s.
  // (2 s still leaves a slow board's TCP + TLS handshake room.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!tls_ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = read_named_file("TLS CA file", tls_ca_file);
    creds = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

void prepare_context(grpc::ClientContext& context, const std::string& token, double timeout_s) {
  context.AddMetadata(kTokenMetadata, token);
  if (timeout_s > 0) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(timeout_s)));
  }
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace kiln::farm
