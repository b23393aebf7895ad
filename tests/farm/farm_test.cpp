// The device farm end to end: a real tracker and real kiln-worker processes on 127.0.0.1,
// measuring the fixture kernels through the client library. Every test is bounded in time;
// the harness kills every process it started.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "tests/farm/farm_harness.h"
#include "rpc/farm/data.h"
#include "rpc/farm/transport.h"

namespace kiln::farm {
namespace {

using testing::Farm;
using testing::fixture_job;

std::string describe(const pb::Result& r) {
  return "job " + std::to_string(r.index()) + ": " + error_kind_name(r.error()) + " " +
         r.message() + " on " + r.worker_id();
}

TEST(Farm, MixedBatchOfFiftyCompletesOnTwoWorkers) {
  Farm farm;
  farm.start_worker("host");
  farm.start_worker("host");
  farm.wait_for_workers("host", 2);
  std::vector<pb::Job> jobs;
  for (int i = 0; i < 50; ++i) {
    // Sizes, seeds and checks vary: reference values, or (every fifth job, all the same
    // workload) compare-with-the-first-correct-candidate.
    const bool first_correct = i % 5 == 0;
    pb::Job j = first_correct ? fixture_job("add_one", 513, 77, false)
                              : fixture_job("add_one", 1 + 97 * i, 1000 + i);
    if (first_correct) j.mutable_check()->set_return_outputs(true);
    if (i % 7 == 0) j.set_min_repeat_ms(1);
    if (i % 11 == 0) j.set_flush_cache(true);
    jobs.push_back(std::move(j));
  }
  FarmClient client = farm.client();
  auto batch = client.submit("host", jobs);
  const auto results = batch->wait_all();
  std::map<std::string, int> per_worker;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const pb::Result& r = results[i];
    EXPECT_EQ(r.index(), i);
    EXPECT_EQ(r.error(), pb::OK) << describe(r);
    EXPECT_EQ(r.costs_size(), 3);
    for (const double c : r.costs()) EXPECT_GT(c, 0);
    EXPECT_LE(r.start_time(), r.end_time());
    ++per_worker[r.worker_id()];
  }
  EXPECT_EQ(per_worker.size(), 2u) << "both workers should have served jobs";
  const pb::StatusReply status = client.status();
  uint64_t completed = 0;
  for (const auto& w : status.workers()) completed += w.completed();
  EXPECT_EQ(completed, 50u);
}

TEST(Farm, BadCandidatesGiveTheirErrorKindAndTheWorkerGoesOn) {
  Farm farm;
  farm.start_worker("host");
  farm.wait_for_workers("host", 1);
  std::vector<pb::Job> jobs = {
      fixture_job("segv", 16, 1),           fixture_job("hang", 16, 2, true, /*timeout_s=*/1.0),
      fixture_job("add_two", 16, 3),        fixture_job("fail_status", 16, 4),
      fixture_job("no_such_kernel", 16, 5), fixture_job("add_one", 16, 6),
  };
  jobs.push_back(fixture_job("add_one", 16, 7));
  jobs.back().set_so("this is not an ELF file");
  jobs.push_back(fixture_job("add_one", 16, 8));
  FarmClient client = farm.client();
  const auto results = client.submit("host", jobs)->wait_all();
  const std::vector<pb::ErrorKind> want = {pb::RUNTIME_ERROR, pb::TIMEOUT,     pb::WRONG_RESULT,
                                           pb::RUNTIME_ERROR, pb::BUILD_ERROR, pb::OK,
                                           pb::BUILD_ERROR,   pb::OK};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(results[i].error(), want[i]) << describe(results[i]);
    EXPECT_EQ(results[i].worker_id(), results[0].worker_id()) << "one worker served them all";
  }
  EXPECT_NE(results[0].message().find("signal 11"), std::string::npos) << results[0].message();
  EXPECT_NE(results[2].message().find("differ"), std::string::npos) << results[2].message();
  EXPECT_NE(results[3].message().find("status 5"), std::string::npos) << results[3].message();
  const auto status = client.status();
  ASSERT_EQ(status.workers_size(), 1);
  EXPECT_EQ(status.workers(0).completed(), 2u);
  EXPECT_EQ(status.workers(0).timed_out(), 1u);
  EXPECT_EQ(status.workers(0).failed(), 5u);
}

TEST(Farm, WorkerKilledMidJobHasItsJobRerunElsewhere) {
  Farm farm(/*heartbeat_timeout_s=*/1.0);
  const std::size_t doomed = farm.start_worker("host");
  farm.wait_for_workers("host", 1);
  FarmClient client = farm.client();
  std::vector<pb::Job> jobs = {fixture_job("add_one_slow", 64, 1), fixture_job("add_one", 64, 2),
                               fixture_job("add_one", 64, 3)};
  jobs[0].set_repeat(1);  // the check run and one repeat: 3 s
  auto batch = client.submit("host", jobs);
  // Wait until the only worker holds the slow job, then kill it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (bool busy = false; !busy;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the worker never took the job";
    const auto status = client.status();
    busy = status.workers_size() == 1 && status.workers(0).busy_job() != 0;
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  farm.worker(doomed).kill_now(SIGKILL);
  farm.start_worker("host");
  const auto results = batch->wait_all();
  for (const auto& r : results) EXPECT_EQ(r.error(), pb::OK) << describe(r);
  EXPECT_EQ(results[0].attempts(), 2u);
  EXPECT_EQ(results[0].worker_id(), "host-2");
  EXPECT_NE(farm.tracker_log().find("went silent"), std::string::npos);
}

TEST(Farm, WrongOrMissingTokenIsRejected) {
  Farm farm;
  FarmClient wrong(farm.address(), "not-the-token");
  try {
    wrong.submit("host", {fixture_job("add_one", 4, 1)});
    FAIL() << "submit with a wrong token succeeded";
  } catch (const FarmError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAUTHENTICATED) << e.what();
  }
  // No token at all: a raw stub without the metadata entry.
  auto stub = pb::Tracker::NewStub(make_channel(farm.address()));
  grpc::ClientContext ctx;
  pb::StatusReply reply;
  EXPECT_EQ(stub->Status(&ctx, pb::StatusRequest{}, &reply).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // A worker with the wrong token gives up with status 2.
  const std::string bad_token = farm.dir() + "/bad.token";
  std::FILE* f = std::fopen(bad_token.c_str(), "w");
  std::fputs("nope\n", f);
  std::fclose(f);
  testing::Process worker(
      {KILN_WORKER, "--tracker", farm.address(), "--key", "host", "--token-file", bad_token},
      farm.dir() + "/bad-worker.log");
  const int status = worker.wait_exit(10);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string log = farm.tracker_log();
  EXPECT_NE(log.find("wrong farm token"), std::string::npos) << log;
  EXPECT_NE(log.find("missing farm token"), std::string::npos) << log;
  EXPECT_EQ(farm.client().status().workers_size(), 0);
}

TEST(Farm, TwoClientsSharingAKeyBothFinishInterleaved) {
  Farm farm;
  farm.start_worker("host");
  farm.start_worker("host");
  farm.wait_for_workers("host", 2);
  FarmClient a = farm.client(), b = farm.client();
  std::vector<pb::Job> ja, jb;
  for (int i = 0; i < 20; ++i) ja.push_back(fixture_job("add_one", 256, i));
  for (int i = 0; i < 20; ++i) jb.push_back(fixture_job("add_one", 256, 100 + i));
  auto batch_a = a.submit("host", ja);  // a's whole batch is queued before b's
  auto batch_b = b.submit("host", jb);
  std::vector<pb::Result> ra, rb;
  std::thread ta([&] { ra = batch_a->wait_all(); });
  std::thread tb([&] { rb = batch_b->wait_all(); });
  ta.join();
  tb.join();
  std::vector<std::pair<double, char>> order;
  for (const auto& r : ra) {
    EXPECT_EQ(r.error(), pb::OK) << describe(r);
    order.emplace_back(r.end_time(), 'a');
  }
  for (const auto& r : rb) {
    EXPECT_EQ(r.error(), pb::OK) << describe(r);
    order.emplace_back(r.end_time(), 'b');
  }
  ASSERT_EQ(order.size(), 40u);
  std::sort(order.begin(), order.end());
  int b_in_first_half = 0;
  for (int i = 0; i < 20; ++i) b_in_first_half += order[i].second == 'b';
  // Round robin: b's jobs start while a still has most of its batch queued.
  EXPECT_GE(b_in_first_half, 6) << "client b starved behind client a";
}

TEST(Farm, MalformedRequestsGetAnErrorAndTheTrackerCarriesOn) {
  Farm farm;
  FarmClient client = farm.client();
  auto expect_invalid = [&](pb::Job job, const std::string& words) {
    try {
      client.submit("host", {job});
      ADD_FAILURE() << "accepted a job that should be invalid (" << words << ")";
    } catch (const FarmError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  pb::Job j = fixture_job("add_one", 4, 1);
  j.clear_entry();
  expect_invalid(j, "entry");
  j = fixture_job("add_one", 4, 1);
  j.mutable_args(1)->set_shape(0, -3);
  expect_invalid(j, "negative");
  j = fixture_job("add_one", 4, 1);
  j.mutable_args(1)->set_dtype(static_cast<pb::DType>(42));
  expect_invalid(j, "dtype");
  j = fixture_job("add_one", 4, 1);
  j.set_repeat(0);
  expect_invalid(j, "repeat");
  j = fixture_job("add_one", 4, 1);
  j.mutable_check()->set_reference(0, "short");
  expect_invalid(j, "reference");
  EXPECT_THROW(client.submit("", {fixture_job("add_one", 4, 1)}), FarmError);
  EXPECT_THROW(client.submit("host", {}), FarmError);
  EXPECT_EQ(client.status().workers_size(), 0);  // still serving
}

TEST(Farm, CancelledBatchStopsAndTheWorkerServesTheNext) {
  Farm farm;
  farm.start_worker("host");
  farm.wait_for_workers("host", 1);
  FarmClient client = farm.client();
  auto batch = client.submit(
      "host", {fixture_job("hang", 8, 1, true, 60), fixture_job("hang", 8, 2, true, 60)});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  batch->cancel();
  for (const auto& r : batch->wait_all()) EXPECT_EQ(r.error(), pb::CANCELLED) << describe(r);
  const auto next = client.submit("host", {fixture_job("add_one", 8, 3)})->wait_all();
  EXPECT_EQ(next[0].error(), pb::OK) << describe(next[0]);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(Farm, StatusCommandPrintsKeysWorkersAndCounts) {
  Farm farm;
  farm.start_worker("host");
  farm.start_worker("arm-test");
  farm.wait_for_workers("host", 1);
  farm.wait_for_workers("arm-test", 1);
  farm.client().submit("host", {fixture_job("add_one", 8, 1)})->wait_all();
  const std::string out = farm.dir() + "/status.txt";
  testing::Process status(
      {KILN_BIN, "farm", "status", "--farm", farm.address(), "--token-file", farm.token_file()},
      out);
  const int rc = status.wait_exit(10);
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << testing::read_text(out);
  const std::string text = testing::read_text(out);
  EXPECT_NE(text.find("QUEUED"), std::string::npos) << text;
  EXPECT_NE(text.find("arm-test"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPLETED"), std::string::npos) << text;
  // The host worker's line: idle, 1 completed, 0 failed, 0 timed out.
  EXPECT_TRUE(std::regex_search(text, std::regex("host-[0-9]+ +host +[^ ]+ +no +1 +0 +0 ")))
      << text;
}

TEST(FarmDirect, ListeningWorkerServesAClientWithNoTracker) {
  // A board on a desk: kiln-worker --listen, no tracker. The client library talks to it as to
  // a tracker; the token is required; a batch for another key than the worker's is refused.
  testing::DirectWorker worker({"--key", "desk"});
  FarmClient client(worker.address(), worker.token());
  std::vector<pb::Job> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(fixture_job("add_one", 100 + i, 500 + i));
  jobs.push_back(fixture_job("add_two", 16, 9));
  const auto results = client.submit("desk", jobs)->wait_all();
  ASSERT_EQ(results.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(results[i].error(), pb::OK) << describe(results[i]);
    EXPECT_EQ(results[i].worker_id(), "desk-1");
    EXPECT_EQ(results[i].costs_size(), 3);
    // The machine it ran on, for the records' CPU key: natively, so with its features.
    const pb::Machine& m = results[i].machine();
    EXPECT_FALSE(m.vendor().empty());
    EXPECT_FALSE(m.model().empty());
    EXPECT_GT(m.cores(), 0u);
    EXPECT_FALSE(m.kiln().empty());
    EXPECT_TRUE(m.emulator().empty());
    EXPECT_GT(m.features_size(), 0);
  }
  EXPECT_EQ(results[6].error(), pb::WRONG_RESULT) << describe(results[6]);

  const pb::StatusReply status = client.status();
  EXPECT_TRUE(status.direct());
  ASSERT_EQ(status.workers_size(), 1);
  EXPECT_EQ(status.workers(0).completed(), 6u);
  EXPECT_EQ(status.workers(0).failed(), 1u);
  EXPECT_NE(format_status(status).find("direct worker"), std::string::npos);

  try {
    client.submit("other-board", {fixture_job("add_one", 4, 1)});
    ADD_FAILURE() << "a batch for another key was accepted";
  } catch (const FarmError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("desk"), std::string::npos) << e.what();
  }
  FarmClient wrong(worker.address(), "not-the-token");
  EXPECT_THROW(wrong.status(), FarmError);
  // Workers cannot join a direct worker.
  auto stub = pb::Tracker::NewStub(make_channel(worker.address()));
  grpc::ClientContext ctx;
  ctx.AddMetadata(kTokenMetadata, worker.token());
  pb::RegisterRequest reg;
  reg.set_key("desk");
  pb::RegisterReply reply;
  EXPECT_EQ(stub->Register(&ctx, reg, &reply).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(worker.log().find("wrong farm token"), std::string::npos) << worker.log();
}

TEST(FarmDirect, WithoutAKeyAnyKeyIsTakenAndBadOptionsAreRefused) {
  testing::DirectWorker worker;
  FarmClient client(worker.address(), worker.token());
  const auto r = client.submit("whatever", {fixture_job("add_one", 8, 1)})->wait_all();
  EXPECT_EQ(r[0].error(), pb::OK) << describe(r[0]);
  // --tracker and --listen together, and a malformed --listen: a clear error, exit status 1.
  const std::string dir = ::testing::TempDir();
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--listen", "0", "--tracker", "127.0.0.1:1"},
        std::vector<std::string>{"--listen", "127.0.0.1:http"}}) {
    std::vector<std::string> argv = {KILN_WORKER};
    argv.insert(argv.end(), bad.begin(), bad.end());
    const std::string log = dir + "/bad-direct.log";
    std::remove(log.c_str());
    testing::Process p(argv, log, {"KILN_FARM_TOKEN=t"});
    const int status = p.wait_exit(10);
    ASSERT_TRUE(WIFEXITED(status)) << testing::read_text(log);
    EXPECT_NE(WEXITSTATUS(status), 0) << testing::read_text(log);
    EXPECT_NE(testing::read_text(log).find("--"), std::string::npos) << testing::read_text(log);
  }
}

}  // namespace
}  // namespace kiln::farm

namespace kiln::farm {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A worker whose tracker goes away backs off (jittered, capped at a few seconds) and logs the
// loss once, not once per attempt (it used to log ten lines a second).
TEST(FarmBackoff, LostTrackerIsLoggedOnceAndRetriedWithBackoff) {
  testing::Farm farm;
  const std::size_t w = farm.start_worker("host");
  farm.wait_for_workers("host", 1);
  // Kill the tracker: the worker's lease calls now fail.
  kill(farm.tracker_pid(), SIGKILL);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const std::string log = farm.worker_log(w);
  EXPECT_EQ(count_of(read_text(log), "retrying with backoff"), 1u) << read_text(log);
  EXPECT_EQ(count_of(read_text(log), "kiln-worker["), 2u) << read_text(log);  // + registered
}

}  // namespace
}  // namespace kiln::farm
