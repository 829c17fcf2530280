// Issue 4 acceptance: failures are classified and the restart policy applied (an HBM OOM is not
// retried; a generic failure spends max_restarts), and cancelling a run stops every rank's
// process within the grace period.

#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kCancelGraceSeconds = 4;

class Failures : public E2eTest {};

TEST_F(Failures, HbmOomFailsAtOnceWithoutRetry) {
  const auto cluster = create_cluster("cpu-1", 1);
  start_worker(cluster, 0, 0);
  const json run = submit(
      command_spec(unique_name("oom"), cluster,
                   {"/bin/sh", "-c",
                    "echo 'step 0 compiling'; "
                    "echo 'RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm' >&2; exit 1"},
                   3));
  const std::string id = run["id"];

  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 120s, &done));
  EXPECT_EQ(done.value("failure_class", json()), json("oom")) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  // Not retried, although the budget (3) allowed it.
  std::this_thread::sleep_for(1s);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  EXPECT_EQ(att[0].value("state", ""), "failed") << describe_attempts(att);
  EXPECT_EQ(att[0].value("failure_class", json()), json("oom")) << describe_attempts(att);
  ASSERT_EQ(att[0].value("hosts", json::array()).size(), 1u) << describe_attempts(att);
  EXPECT_EQ(att[0]["hosts"][0].value("exit_code", json()), json(1)) << describe_attempts(att);
  EXPECT_EQ(get_run(id).value("state", ""), "failed");
  // The signature line was stored (it is what the classification rests on).
  EXPECT_TRUE(logs_match_workers(id, att[0]));
}

TEST_F(Failures, GenericFailureSpendsMaxRestartsThenFails) {
  const auto cluster = create_cluster("cpu-1", 1);
  start_worker(cluster, 0, 0);
  const json run =
      submit(command_spec(unique_name("exit3"), cluster,
                          {"/bin/sh", "-c", "echo attempt $PODIUM_ATTEMPT_NUMBER; exit 3"}, 2));
  const std::string id = run["id"];

  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 180s, &done));
  EXPECT_EQ(done.value("failure_class", json()), json("error")) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 2) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 0) << done.dump();
  std::this_thread::sleep_for(1s);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 3u) << describe_attempts(att) << diagnostics(id);
  for (size_t i = 0; i < att.size(); ++i) {
    EXPECT_EQ(att[i].value("number", -1), static_cast<int>(i) + 1) << describe_attempts(att);
    EXPECT_EQ(att[i].value("state", ""), "failed") << describe_attempts(att);
    EXPECT_EQ(att[i].value("failure_class", json()), json("error")) << describe_attempts(att);
    ASSERT_EQ(att[i].value("hosts", json::array()).size(), 1u) << describe_attempts(att);
    EXPECT_EQ(att[i]["hosts"][0].value("exit_code", json()), json(3)) << describe_attempts(att);
    // Each attempt's process saw its own attempt number.
    EXPECT_EQ(local_rank_lines(att[i], 0),
              std::vector<std::string>{"attempt " + std::to_string(i + 1)})
        << "attempt " << i + 1;
  }
  EXPECT_EQ(get_run(id).value("state", ""), "failed");
}

class Cancel : public E2eTest {
 protected:
  Settings settings() const override {
    return {.extra = {"scheduler.cancel_grace_seconds=" + std::to_string(kCancelGraceSeconds)},
            .fixed_port = false};
  }

  // Submits `argv` on a cpu-2 cluster with both agents, waits until both ranks run, cancels, and
  // checks that every rank's process group is gone within `limit` of the cancel (and not before
  // `not_before`) and the run ends cancelled.
  void cancel_and_check(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                        std::chrono::milliseconds not_before = std::chrono::milliseconds(0)) {
    const auto cluster = create_cluster("cpu-2", 1);
    start_workers(cluster, 1, 2);
    const json run = submit(command_spec(unique_name("cancel"), cluster, argv, 0));
    const std::string id = run["id"];

    std::map<int, pid_t> pids;
    ASSERT_TRUE(wait_for_run(
        id, "both ranks running with their pids",
        [&](const json& r) {
          if (r.value("state", "") != "running") return false;
          auto att = attempts(id);
          if (att.size() != 1) return false;
          pids.clear();
          for (const auto& h : att[0].value("hosts", json::array()))
            if (h.contains("pid") && h["pid"].is_number_integer())
              pids[h.value("rank", -1)] = h["pid"].get<int>();
          if (pids.size() != 2) return false;
          // The shell has started its child (the line is out): the group is complete.
          for (int rank : {0, 1})
            if (local_rank_lines(att[0], rank).empty()) return false;
          return true;
        },
        120s));
    for (const auto& [rank, pid] : pids)
      ASSERT_TRUE(process_alive(pid)) << "rank " << rank << ": " << describe_process(pid);

    auto r = admin().post("/api/v1/runs/" + it::enc(id) + "/cancel");
    ASSERT_TRUE(r.status == 200 || r.status == 202) << r;
    const auto cancelled_at = Clock::now();

    std::string alive;
    const bool gone = eventually(
        [&] {
          alive.clear();
          for (const auto& [rank, pid] : pids) {
            if (process_alive(pid))
              alive += "  rank " + std::to_string(rank) + ": " + describe_process(pid) + "\n";
            for (pid_t m : process_group_members(pid))
              if (m != pid)
                alive += "  rank " + std::to_string(rank) + " group: " + describe_process(m) + "\n";
          }
          return alive.empty();
        },
        limit, 50ms);
    const auto took =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - cancelled_at);
    EXPECT_TRUE(gone) << "rank processes still alive " << took.count()
                      << " ms after the cancel (grace " << kCancelGraceSeconds << " s, limit "
                      << limit.count() << " ms):\n"
                      << alive << diagnostics(id);
    EXPECT_GE(took, not_before) << "the ranks were gone " << took.count()
                                << " ms after the cancel: killed before the grace period ("
                                << kCancelGraceSeconds << " s) ended";

    json done;
    ASSERT_TRUE(wait_for_state(id, "cancelled", limit, &done));
    const auto att = attempts(id);
    ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
    EXPECT_EQ(att[0].value("state", ""), "cancelled") << describe_attempts(att);
    // A finished run cannot be cancelled again.
    EXPECT_TRUE(it::is_problem(admin().post("/api/v1/runs/" + it::enc(id) + "/cancel"), 409));
  }
};

TEST_F(Cancel, EveryRankProcessGoneWithinGrace) {
  // Ranks that obey SIGTERM are gone within the grace period itself.
  cancel_and_check({"/bin/sh", "-c", "echo started; sleep 1000"},
                   std::chrono::seconds(kCancelGraceSeconds));
}

// A rank that ignores SIGTERM (sh and its sleep both inherit the ignored disposition) is killed
// with SIGKILL when the grace period ends.
TEST_F(Cancel, RankIgnoringSigtermIsKilledAfterGrace) {
  // SIGKILL comes when the grace period ends (not before: the cancel reaches the agent within
  // milliseconds, hence the 1 s allowance); a margin for the agent's timer and the reaping.
  cancel_and_check({"/bin/sh", "-c", "trap '' TERM; echo started; sleep 1000"},
                   std::chrono::seconds(kCancelGraceSeconds + 4),
                   std::chrono::seconds(kCancelGraceSeconds - 1));
}

}  // namespace
}  // namespace podium::e2e
