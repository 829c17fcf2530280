// Racing clients: unique names under concurrent creates, one winner for concurrent state changes,
// and never a 500.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

class Concurrency : public PodiumTest {};

// Runs `fn` on `n` threads at once; the statuses they got, counted.
std::map<int, int> race(int n, const std::function<Reply()>& fn, std::vector<Reply>* replies) {
  std::mutex mu;
  std::map<int, int> counts;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&] {
      Reply r = fn();
      std::lock_guard lock(mu);
      ++counts[r.status];
      replies->push_back(std::move(r));
    });
  for (auto& t : threads) t.join();
  return counts;
}

std::string describe(const std::vector<Reply>& replies) {
  std::string out;
  for (const auto& r : replies) out += "  " + r.describe() + "\n";
  return out;
}

TEST_F(Concurrency, DuplicateNamesHaveExactlyOneWinner) {
  auto admin = podium().admin();
  auto member = podium().create_user("member");
  std::vector<Reply> replies;
  auto clusters = race(
      8,
      [&] {
        return admin.post("/api/v1/clusters", {{"name", "race"}, {"accelerator", "cpu-1"}});
      },
      &replies);
  EXPECT_EQ(clusters, (std::map<int, int>{{201, 1}, {409, 7}})) << describe(replies);
  for (const auto& r : replies) {
    if (r.status != 201) {
      EXPECT_TRUE(is_problem(r, 409)) << r;
    }
  }

  replies.clear();
  auto users = race(
      8,
      [&] {
        return admin.post("/api/v1/users", {{"username", "race"}, {"role", "viewer"}});
      },
      &replies);
  EXPECT_EQ(users, (std::map<int, int>{{201, 1}, {409, 7}})) << describe(replies);

  replies.clear();
  auto datasets = race(
      8,
      [&] {
        return member.api.post("/api/v1/datasets",
                               {{"name", "race"}, {"uri", "gs://b/race"}, {"format", "text"}});
      },
      &replies);
  EXPECT_EQ(datasets, (std::map<int, int>{{201, 1}, {409, 7}})) << describe(replies);

  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM clusters WHERE name = 'race'"), "1");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM users WHERE username = 'race'"), "1");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM datasets WHERE name = 'race'"), "1");
}

TEST_F(Concurrency, ConcurrentCancelsHaveOneWinnerAndOneEvent) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  const std::string id = podium().submit_run(member.api, "c")["id"];
  std::vector<Reply> replies;
  auto counts = race(
      8, [&] { return member.api.post("/api/v1/runs/" + id + "/cancel"); }, &replies);
  EXPECT_EQ(counts, (std::map<int, int>{{200, 1}, {409, 7}})) << describe(replies);
  auto events = member.api.get("/api/v1/runs/" + id + "/events");
  ASSERT_EQ(events.status, 200) << events;
  EXPECT_EQ(events.json["items"].size(), 2u) << "one transition per state change: " << events;

  // Concurrent deletes of the finished run: one 204, the rest 404.
  replies.clear();
  auto deletes = race(
      6, [&] { return member.api.del("/api/v1/runs/" + id); }, &replies);
  EXPECT_EQ(deletes, (std::map<int, int>{{204, 1}, {404, 5}})) << describe(replies);
}

TEST_F(Concurrency, ManyClientsAtOnceAllGetAnswers) {
  auto admin = podium().admin();
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  std::atomic<int> n{0};
  std::vector<Reply> replies;
  auto counts = race(
      40,
      [&] {
        const int i = n++;
        switch (i % 4) {
          case 0:
            return admin.get("/api/v1/clusters");
          case 1:
            return member.api.post("/api/v1/runs",
                                   Podium::run_spec("c", "many-" + std::to_string(i)));
          case 2:
            return member.api.get("/api/v1/runs?limit=5");
          default:
            return podium().anonymous().get("/metrics");
        }
      },
      &replies);
  EXPECT_EQ(counts, (std::map<int, int>{{200, 30}, {201, 10}})) << describe(replies);
  EXPECT_EQ(member.api.get("/api/v1/runs?limit=500").json["items"].size(), 10u);
}

}  // namespace
}  // namespace podium::it
