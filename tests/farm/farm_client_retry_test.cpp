// The client library against a tracker it cannot reach: it retries with backoff for a bounded
// time and logs the outage once (and the recovery once), not once per attempt.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "rpc/farm/client.h"
#include "rpc/farm/local_farm.h"
#include "runtime/process/temp_dir.h"

namespace kiln::farm {
namespace {

using Clock = std::chrono::steady_clock;

// A loopback port that nothing listens on (bound once to learn a free one, then closed).
int unused_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Collects the client's log lines.
struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  RetryPolicy policy(double give_up_s) {
    return {give_up_s, [this](const std::string& line) {
              std::lock_guard lock(mu);
              lines.push_back(line);
            }};
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
  }
};

TEST(FarmClientRetry, GoneTrackerIsRetriedForABoundedTimeAndLoggedOnce) {
  Lines log;
  FarmClient client("127.0.0.1:" + std::to_string(unused_port()), "token", "", log.policy(3));
  const auto t0 = Clock::now();
  try {
    client.status();
    FAIL() << "a status call to nothing succeeded";
  } catch (const FarmError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE) << e.what();
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(took, 2.9);  // it kept trying for the whole budget...
  EXPECT_LT(took, 8.0);  // ...and gave up once the budget was spent
  EXPECT_EQ(log.lines.size(), 1u) << log.all();
  EXPECT_NE(log.all().find("retrying with backoff"), std::string::npos) << log.all();
}

TEST(FarmClientRetry, NoRetryBudgetFailsAtOnce) {
  Lines log;
  FarmClient client("127.0.0.1:" + std::to_string(unused_port()), "token", "", log.policy(0));
  const auto t0 = Clock::now();
  EXPECT_THROW(client.status(), FarmError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
  EXPECT_TRUE(log.lines.empty()) << log.all();
}

TEST(FarmClientRetry, TrackerThatComesUpLateIsReachedAndTheRecoveryLogged) {
  TempDir dir("kiln-farm-retry");
  const std::string token_file = dir.file("farm.token");
  std::ofstream(token_file) << "late-token\n";
  const int port = unused_port();
  Lines log;
  FarmClient client("127.0.0.1:" + std::to_string(port), "late-token", "", log.policy(30));
  std::unique_ptr<ChildProcess> tracker;
  std::thread start_late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    tracker = std::make_unique<ChildProcess>(
        std::vector<std::string>{KILN_BIN, "tracker", "--port", std::to_string(port),
                                 "--token-file", token_file},
        dir.file("tracker.log"));
  });
  pb::StatusReply status;
  EXPECT_NO_THROW(status = client.status()) << log.all();
  start_late.join();
  EXPECT_FALSE(status.direct());
  ASSERT_EQ(log.lines.size(), 2u) << log.all();
  EXPECT_NE(log.lines[0].find("retrying with backoff"), std::string::npos) << log.all();
  EXPECT_NE(log.lines[1].find("again"), std::string::npos) << log.all();
}

}  // namespace
}  // namespace kiln::farm
