// GET /runs/{id}'s batched reads (backend/api/run_read_batch.h) against a real podium-server:
// concurrent reads of different runs each get their own run, some of them share a query, a read
// sees every write acknowledged before it, and no id (missing, quoted, NUL) fails the other
// reads of its batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

class RunReadBatch : public PodiumTest {};

// podium_run_read_batches_total / podium_run_reads_total from GET /metrics.
struct BatchCounts {
  long long batches = -1;
  long long reads = -1;
};
// podium_http_requests_total of GET /api/v1/runs/{id} with `status` (0 when there is none yet).
long long get_run_requests(const Podium& p, int status) {
  const auto body = p.anonymous().get("/metrics").body;
  std::smatch m;
  const std::regex line(
      "\npodium_http_requests_total\\{method=\"GET\",route=\"/api/v1/runs/"
      "\\{id\\}\",status=\"" +
      std::to_string(status) + "\"\\} (\\d+)\n");
  return std::regex_search(body, m, line) ? std::stoll(m[1]) : 0;
}

BatchCounts batch_counts(const Podium& p) {
  const auto body = p.anonymous().get("/metrics").body;
  BatchCounts c;
  std::smatch m;
  if (std::regex_search(body, m, std::regex(R"(\npodium_run_read_batches_total (\d+)\n)")))
    c.batches = std::stoll(m[1]);
  if (std::regex_search(body, m, std::regex(R"(\npodium_run_reads_total (\d+)\n)")))
    c.reads = std::stoll(m[1]);
  return c;
}

// GETs every path at once, one thread each, started together; the replies in the paths' order.
std::vector<Reply> get_all_at_once(const Api& api, const std::vector<std::string>& paths) {
  std::vector<Reply> replies(paths.size());
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < paths.size(); ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < paths.size()) std::this_thread::yield();
      replies[i] = api.get(paths[i]);
    });
  for (auto& t : threads) t.join();
  return replies;
}

TEST_F(RunReadBatch, FiftyConcurrentReadsOfDifferentRunsEachGetTheirOwnRun) {
  auto cluster = podium().create_cluster(unique_name("batch"), "cpu-1");
  auto admin = podium().admin();
  std::vector<std::string> ids;
  std::vector<std::string> paths;
  for (int i = 0; i < 50; ++i) {
    auto run = podium().submit_run(admin, cluster["name"], "batched-" + std::to_string(i),
                                   {{"tags", json::array({"n" + std::to_string(i)})}});
    ids.push_back(run["id"]);
    paths.push_back("/api/v1/runs/" + ids.back());
  }
  const auto before = batch_counts(podium());
  ASSERT_GE(before.batches, 0) << "no podium_run_read_batches_total in /metrics";
  ASSERT_GE(before.reads, 0) << "no podium_run_reads_total in /metrics";
  // Several rounds: whether two reads meet in one batch depends on timing, but over a few
  // rounds of 50 reads started together some do.
  bool shared = false;
  for (int round = 0; round < 5 && !shared; ++round) {
    const auto start = batch_counts(podium());
    auto replies = get_all_at_once(admin, paths);
    for (size_t i = 0; i < replies.size(); ++i) {
      ASSERT_EQ(replies[i].status, 200) << replies[i];
      EXPECT_EQ(replies[i].json["id"], ids[i]);
      EXPECT_EQ(replies[i].json["name"], "batched-" + std::to_string(i));
      EXPECT_EQ(replies[i].json["tags"], json::array({"n" + std::to_string(i)}));
      EXPECT_TRUE(replies[i].json.contains("plan")) << "GET /runs/{id} shows the plan";
      EXPECT_TRUE(replies[i].header("x-request-id").has_value());
    }
    const auto end = batch_counts(podium());
    // Every read went through the batcher (the /metrics reads themselves are not run reads).
    EXPECT_EQ(end.reads - start.reads, 50);
    shared = end.batches - start.batches < end.reads - start.reads;
  }
  EXPECT_TRUE(shared) << "in 5 rounds of 50 concurrent reads, no two shared a query";
}

TEST_F(RunReadBatch, AReadSeesTheWriteAcknowledgedBeforeIt) {
  auto cluster = podium().create_cluster(unique_name("raw"), "cpu-1");
  auto admin = podium().admin();
  const std::string id = podium().submit_run(admin, cluster["name"], "edited")["id"];
  const std::string path = "/api/v1/runs/" + id;
  // Other reads keep the batcher busy meanwhile, so that this run's reads queue behind
  // queries already in flight.
  std::atomic<bool> done{false};
  std::vector<std::thread> load;
  for (int i = 0; i < 8; ++i)
    load.emplace_back([&] {
      while (!done.load()) admin.get(path);
    });
  for (int i = 0; i < 30; ++i) {
    const std::string notes = "edit " + std::to_string(i);
    ASSERT_EQ(admin.patch(path, {{"notes", notes}}).status, 200);
    auto r = admin.get(path);
    ASSERT_EQ(r.status, 200) << r;
    EXPECT_EQ(r.json["notes"], notes) << "read " << i << " missed the write acknowledged before it";
  }
  done = true;
  for (auto& t : load) t.join();
}

TEST_F(RunReadBatch, AnIdNoRunHasFailsOnlyItsOwnRead) {
  auto cluster = podium().create_cluster(unique_name("odd"), "cpu-1");
  auto admin = podium().admin();
  const std::string id = podium().submit_run(admin, cluster["name"], "neighbour")["id"];
  // Missing, with an array literal's quote, backslash, comma and braces, a SQL quote, and
  // non-ASCII text: each its own 404, while the real run's reads in the same rounds answer.
  const std::vector<std::string> odd = {"/api/v1/runs/run_0000000000000000",
                                        "/api/v1/runs/run_%22%5C%22", "/api/v1/runs/%7Ba%2Cb%7D",
                                        "/api/v1/runs/NULL", "/api/v1/runs/run_%27%3B%20%C3%A9"};
  // A NUL, which no text in PostgreSQL holds and which would end a batch's array parameter
  // early, never reaches a batch: the HTTP layer refuses it in the target.
  EXPECT_TRUE(is_problem(admin.get("/api/v1/runs/run_%00x"), 400));
  const long long found_before = get_run_requests(podium(), 200);
  const long long missing_before = get_run_requests(podium(), 404);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> paths;
    for (int i = 0; i < 10; ++i) {
      paths.push_back("/api/v1/runs/" + id);
      paths.push_back(odd[static_cast<size_t>(i) % odd.size()]);
    }
    auto replies = get_all_at_once(admin, paths);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (i % 2 == 0) {
        ASSERT_EQ(replies[i].status, 200) << replies[i];
        EXPECT_EQ(replies[i].json["id"], id);
      } else {
        EXPECT_TRUE(is_problem(replies[i], 404)) << replies[i];
        EXPECT_TRUE(replies[i].header("x-request-id").has_value());
      }
    }
  }
  // The request metrics count each read's own answer, not the hand-over to its batch.
  EXPECT_EQ(get_run_requests(podium(), 200) - found_before, 30);
  EXPECT_EQ(get_run_requests(podium(), 404) - missing_before, 30);
}

}  // namespace
}  // namespace podium::it
