// Issue 4 acceptance: a reference run on one slice of two hosts from submission to success, and
// the same with the server killed (SIGKILL) and restarted in the middle of it.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>
#include <thread>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

std::vector<int> range(int from, int to_exclusive) {
  return step_range(from, to_exclusive);
}

double mean(const std::vector<double>& v, size_t from, size_t count) {
  double s = 0;
  for (size_t i = from; i < from + count; ++i) s += v.at(i);
  return s / static_cast<double>(count);
}

class ReferenceRun : public E2eTest {};

TEST_F(ReferenceRun, HappyPathOneSliceTwoHosts) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  const auto ds = dataset();
  const json run = submit(reference_spec(unique_name("happy"), cluster, ds,
                                         {.steps = 40,
                                          .per_device_batch_size = 2,
                                          .max_target_length = 64,
                                          .checkpoint_period = 10,
                                          .max_restarts = 3}));
  const std::string id = run["id"];
  // Live follow, opened before the ranks print anything (python and jax take seconds).
  LogStream stream(admin(), id);

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s, &done));
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 0) << done.dump();
  EXPECT_EQ(done.value("last_step", -1), 39) << done.dump();
  EXPECT_TRUE(done.value("failure_class", json()).is_null()) << done.dump();

  // The run went through the contract's states: queued, starting, running, succeeded.
  {
    std::vector<std::string> states;
    for (const auto& e : events(id))
      if (e.contains("to_state") && e["to_state"].is_string()) states.push_back(e["to_state"]);
    EXPECT_EQ(states, (std::vector<std::string>{"queued", "starting", "running", "succeeded"}))
        << "the run's state transitions (GET /runs/{id}/events, to_state)" << diagnostics(id);
  }

  // One attempt, both ranks on slice 0, both exited 0.
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  const json& a = att[0];
  EXPECT_EQ(a.value("state", ""), "succeeded") << describe_attempts(att);
  EXPECT_EQ(a.value("num_slices", -1), 1) << describe_attempts(att);
  EXPECT_EQ(a.value("first_step", -1), 0) << describe_attempts(att);
  EXPECT_EQ(a.value("last_step", -1), 39) << describe_attempts(att);
  const auto hosts = hosts_by_rank(a);
  ASSERT_EQ(hosts.size(), 2u) << describe_attempts(att);
  std::set<std::string> workers_used;
  for (int rank : {0, 1}) {
    ASSERT_TRUE(hosts.count(rank)) << "no rank " << rank << "\n" << describe_attempts(att);
    const json& h = hosts.at(rank);
    EXPECT_EQ(h.value("slice", -1), 0) << h.dump();
    EXPECT_EQ(h.value("exit_code", json()), json(0)) << h.dump();
    workers_used.insert(h.value("worker_id", ""));
  }
  EXPECT_EQ(workers_used.size(), 2u) << "both ranks on one worker\n" << describe_attempts(att);
  // What the ranks ran with: each agent probed the workload's interpreter (the project's venv,
  // which has jax) before starting its rank.
  const json& env = a["environment"];
  EXPECT_EQ(env.value("ranks_reported", -1), 2) << env.dump();
  EXPECT_TRUE(env["python"].is_string()) << env.dump();
  EXPECT_TRUE(env["jax"].is_string()) << env.dump();
  EXPECT_EQ(env["differs"], json::array()) << env.dump();

  // Metrics: steps 0..39, each exactly once, with a loss and a step time; the loss falls.
  const json m = metrics(id);
  EXPECT_TRUE(metrics_steps_are(m, range(0, 40), true));
  if (m.contains("series") && m["series"].contains("loss") && m["series"]["loss"].is_array() &&
      m["series"]["loss"].size() >= 10) {
    std::vector<double> loss;
    for (const auto& v : m["series"]["loss"]) loss.push_back(v.is_number() ? v.get<double>() : 0);
    EXPECT_LT(mean(loss, loss.size() - 5, 5), mean(loss, 0, 5))
        << "the loss did not fall: " << m["series"]["loss"].dump();
  } else {
    ADD_FAILURE() << "no loss series of 10+ values: " << m.dump();
  }

  // Checkpoints 10, 20, 30, 40 (N = steps completed), each once.
  EXPECT_EQ(checkpoint_steps(id), (std::vector<int>{10, 20, 30, 40}));

  // Both ranks' logs: what the agents read, in seq order, each line once; 40 step lines each.
  EXPECT_TRUE(logs_match_workers(id, a));
  for (int rank : {0, 1})
    EXPECT_EQ(step_lines(local_rank_lines(a, rank)), range(0, 40)) << "rank " << rank;

  // The stream delivered every stored line of both ranks once, in each rank's seq order.
  {
    std::map<int, std::vector<json>> stored;
    size_t total = 0;
    for (int rank : {0, 1}) {
      stored[rank] = stored_logs(id, a["id"], rank);
      total += stored[rank].size();
    }
    eventually([&] { return stream.events().size() >= total || stream.ended(); }, 20s);
    stream.stop();
    EXPECT_EQ(stream.error(), "");
    std::map<int, long long> next_seq;
    size_t checked = 0;
    for (const auto& e : stream.events()) {
      ASSERT_TRUE(e.is_object() && e.contains("rank") && e.contains("seq") && e.contains("line") &&
                  e.contains("attempt"))
          << "a log event without attempt, rank, seq, line: " << e.dump();
      const int rank = e["rank"].get<int>();
      const long long seq = e["seq"].get<long long>();
      ASSERT_TRUE(stored.count(rank)) << e.dump();
      ASSERT_EQ(seq, next_seq[rank])
          << "rank " << rank << ": out of order or repeated: " << e.dump();
      ASSERT_LT(static_cast<size_t>(seq), stored[rank].size()) << e.dump();
      EXPECT_EQ(e["line"], stored[rank][seq]["line"]) << e.dump();
      ++next_seq[rank];
      ++checked;
    }
    EXPECT_EQ(checked, total) << "the stream delivered " << checked << " of " << total
                              << " lines; events: "
                              << ::testing::PrintToString(stream.event_names());
  }

  // The summary is computed from those metrics.
  auto summary = admin().get("/api/v1/runs/" + it::enc(id) + "/summary");
  EXPECT_EQ(summary.status, 200) << summary;
  EXPECT_TRUE(summary.json.is_object() && summary.json.contains("step_seconds")) << summary;
}

class ReferenceRunServerRestart : public E2eTest {
 protected:
  // The agents keep their --server URL: the restarted server must listen on the same port.
  Settings settings() const override { return {.extra = {}, .fixed_port = true}; }
};

TEST_F(ReferenceRunServerRestart, ServerKilledMidRunLosesNoLogLine) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  const auto ds = dataset();
  // Larger batches than the happy path: each step takes long enough that the run is still
  // going while the server is down and comes back.
  const json run = submit(reference_spec(unique_name("srvkill"), cluster, ds,
                                         {.steps = 40,
                                          .per_device_batch_size = 8,
                                          .max_target_length = 128,
                                          .checkpoint_period = 10,
                                          .max_restarts = 3}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_run(
      id, "state running with last_step >= 5",
      [](const json& r) {
        return r.value("state", "") == "running" && r.value("last_step", json()).is_number() &&
               r["last_step"].get<int>() >= 5;
      },
      180s));

  const auto before = attempts(id);
  ASSERT_EQ(before.size(), 1u) << describe_attempts(before);

  const int port = podium().server().port();
  const int status = podium().server().kill();
  EXPECT_EQ(status, 128 + SIGKILL);
  // Down for a while: the agents keep the rank running, spool its lines and retry.
  std::this_thread::sleep_for(3s);
  podium().server().start();
  ASSERT_EQ(podium().server().port(), port) << "the restarted server must keep its port";
  // Still mid-run when the server is back (else this test would not test what it says).
  const auto printed = step_lines(local_rank_lines(before[0], 0));
  ASSERT_TRUE(!printed.empty() && printed.back() < 39)
      << "rank 0 had finished while the server was down; steps printed: "
      << ::testing::PrintToString(printed);

  json done;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s, &done));
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 0) << done.dump();

  // The run continued: the same attempt, not a new one.
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << "the server restart must not restart the run\n"
                            << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[0].value("state", ""), "succeeded") << describe_attempts(att);
  // The local files show the rank went on while the server was away (the whole run in one go).
  for (int rank : {0, 1})
    EXPECT_EQ(step_lines(local_rank_lines(att[0], rank)), range(0, 40)) << "rank " << rank;

  // No line lost, none duplicated: stored == what the agents read, seq 0..n-1.
  EXPECT_TRUE(logs_match_workers(id, att[0]));

  // Metrics too: every step once.
  EXPECT_TRUE(metrics_steps_are(metrics(id), range(0, 40), true));
}

}  // namespace
}  // namespace podium::e2e
