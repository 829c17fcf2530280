#pragma once
// The e2e fixture: one Podium deployment per test (private database, podium-server), the
// podium-worker agents the test starts, datasets for the reference workload, and helpers that
// wait for a run with a deadline and fail with everything needed to understand why (the run,
// its attempts and events, the server's and the workers' log tails).
//
//   class MyTest : public podium::e2e::E2eTest {};
//   TEST_F(MyTest, Runs) {
//     auto cluster = create_cluster("cpu-2", 1);
//     start_worker(cluster, 0, 0);
//     start_worker(cluster, 0, 1);
//     auto run = submit(reference_spec(unique_name("r"), cluster, dataset(), {.steps = 40}));
//     ASSERT_TRUE(wait_for_state(run["id"], "succeeded", 240s));
//   }
//
// Every agent (and so every rank process it starts) carries E2E_TEST_TAG=e2e-<pid of the test
// binary>-<hex> in its environment. TearDown stops the agents with SIGTERM (each must exit 0),
// then checks that no tagged process is left (an agent must stop its ranks), killing any it
// finds. SetUp kills tagged processes whose test binary is gone (a crash or a ctest timeout
// kills the agents through PR_SET_PDEATHSIG, but not their ranks, which run in sessions of their
// own).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/support/api.h"
#include "tests/integration/support/env.h"
#include "tests/integration/support/podium.h"
#include "tests/support/podium_process.h"
#include "tests/support/proc_table.h"
#include "tests/support/worker_process.h"

namespace podium::e2e {

using json = nlohmann::json;
using it::Api;
using it::describe_process;
using it::free_port;
using it::process_alive;
using it::process_group_members;
using it::processes_with_env;
using it::processes_with_env_key;
using it::Reply;
using it::unique_name;
using it::WorkerOptions;
using it::WorkerProcess;

// A run of the reference workload (engine/workloads/reference) with these sizes.
struct ReferenceSize {
  int steps = 40;
  int per_device_batch_size = 2;
  int max_target_length = 64;
  int checkpoint_period = 10;
  int max_restarts = 3;
};
json reference_spec(const std::string& name, const std::string& cluster, const std::string& dataset,
                    const ReferenceSize& size);

// A `command` run: argv as given.
json command_spec(const std::string& name, const std::string& cluster,
                  const std::vector<std::string>& argv, int max_restarts = 0);

// Steps the reference workload printed in `lines` ("completed step: N, ..."), in order.
std::vector<int> step_lines(const std::vector<std::string>& lines);
// The value of `field` ("total_weights") in the step line of step `step`; nullopt when absent.
std::optional<double> step_field(const std::vector<std::string>& lines, int step,
                                 const std::string& field);

// A /metrics answer has steps == expected (each_once: exactly, in order; otherwise the distinct
// steps), and series.loss and series.step_seconds with one finite number per step.
::testing::AssertionResult metrics_steps_are(const json& m, const std::vector<int>& expected,
                                             bool each_once);
// [from, to)
std::vector<int> step_range(int from, int to);

// Sleeps in small increments until pred() is true or timeout passes; returns pred()'s last value.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds(100));

// Follows GET /runs/{id}/logs/stream (Server-Sent Events) on a thread of its own, keeping every
// "log" event's JSON. stop() ends it at the next event or after the idle timeout.
class LogStream {
 public:
  LogStream(const Api& api, const std::string& run_id,
            std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(20000));
  ~LogStream();
  LogStream(const LogStream&) = delete;
  LogStream& operator=(const LogStream&) = delete;
  void stop();
  // The "log" events so far (parsed data; a non-JSON data is kept as a string).
  std::vector<json> events() const;
  // Names of all events in order ("log", "state", "end", ...), the last few hundred.
  std::vector<std::string> event_names() const;
  // The stream ended on its own (the server closed it or sent "end").
  bool ended() const;
  // Set when the request failed (status or transport), after the thread ended.
  std::string error() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

class E2eTest : public ::testing::Test {
 protected:
  struct Settings {
    // --set key=value for the server beyond the fixture's own (ports, workload paths).
    std::vector<std::string> extra;
    // The server listens on the same port after a restart (agents keep their --server URL).
    bool fixed_port = false;
    // The deployment's database on a PostgreSQL of this test's own, which the test may pause
    // (private_postgres()); the shared one is never stopped.
    bool private_postgres = false;
    // Added to every agent's environment (e.g. PODIUM_CA_FILE for a server on https).
    std::map<std::string, std::string> worker_env = {};
    // Added to every agent's command line (a later --python wins over the fixture's).
    std::vector<std::string> worker_args = {};
  };
  virtual Settings settings() const { return {}; }

  void SetUp() override;
  void TearDown() override;

  it::Podium& podium() { return *podium_; }
  // Settings::private_postgres: the PostgreSQL server this test's database lives on.
  it::PrivatePostgres& private_postgres() { return *private_pg_; }
  Api admin() const { return podium_->admin(); }
  // This test's directory (datasets, agents' workdirs, workload outputs).
  const std::filesystem::path& dir() const { return dir_->path(); }
  // workloads.output_dir: reference runs write <this>/<run_name>/checkpoints/<N>/.
  std::filesystem::path output_dir() const { return dir() / "outputs"; }
  const std::string& tag() const { return tag_; }
  std::pair<int, int> coordinator_ports() const { return ports_; }

  // POST /api/v1/clusters as admin ({"name","accelerator","num_slices"}); returns the name.
  std::string create_cluster(const std::string& accelerator, int num_slices);
  // Starts a podium-worker for (cluster, slice, host) with a token of that cluster and waits for
  // its "registered" line. The fixture owns it. Ranks run as `run_as` (default: as the tests).
  WorkerProcess& start_worker(const std::string& cluster, int slice, int host,
                              const std::string& run_as = "");
  // start_worker() for every host of the cluster's first `slices` slices of `hosts_per_slice`
  // hosts, slice by slice; the agents in that order.
  std::vector<WorkerProcess*> start_workers(const std::string& cluster, int slices,
                                            int hosts_per_slice);
  WorkerProcess* worker_with_id(const std::string& worker_id);
  const std::vector<std::unique_ptr<WorkerProcess>>& workers() const { return workers_; }
  // A text dataset written by the reference workload's make_dataset.py and registered as admin;
  // returns its name.
  std::string dataset(const std::string& size = "300K");

  // POST /api/v1/runs as admin; fails the test (throws) unless 201.
  json submit(const json& spec);
  // GET /api/v1/runs/{id} (status checked).
  json get_run(const std::string& run_id);
  // GET /api/v1/runs/{id}/attempts items, by number.
  std::vector<json> attempts(const std::string& run_id);
  // GET /api/v1/runs/{id}/events items (first page of up to 500).
  std::vector<json> events(const std::string& run_id);

  // Polls GET /runs/{id} until done(run) holds. Fails (with diagnostics) when `timeout` passes or
  // the run reaches a terminal state for which done() is false. *last gets the last run seen.
  ::testing::AssertionResult wait_for_run(const std::string& run_id, const std::string& what,
                                          const std::function<bool(const json&)>& done,
                                          std::chrono::milliseconds timeout, json* last = nullptr);
  ::testing::AssertionResult wait_for_state(const std::string& run_id, const std::string& state,
                                            std::chrono::milliseconds timeout,
                                            json* last = nullptr);
  // Waits until the run is running with exactly one attempt whose `ranks` hosts all report
  // their pid; *attempt gets that attempt.
  ::testing::AssertionResult wait_for_first_attempt_pids(const std::string& run_id, size_t ranks,
                                                         std::chrono::milliseconds timeout,
                                                         json* attempt);
  // After a host was lost: waits until the run is recovering and the rank process that ran on
  // the surviving host (`survivor_pid`) and its whole group are gone.
  ::testing::AssertionResult wait_for_recovering(const std::string& run_id, pid_t survivor_pid,
                                                 std::chrono::milliseconds timeout,
                                                 json* last = nullptr);
  // The run, its attempts, its events, the last lines of the server's and every agent's log.
  std::string diagnostics(const std::string& run_id);

  // GET /runs/{id}/logs?attempt=<attempt id>&rank=R, every page.
  std::vector<json> stored_logs(const std::string& run_id, const std::string& attempt_id, int rank);
  // For every host of `attempt`: the stored lines of its rank are exactly the lines in the
  // agent's <workdir>/logs/<attempt>/rank-<r>.log, with seq 0, 1, 2, ... in order, each once.
  ::testing::AssertionResult logs_match_workers(const std::string& run_id, const json& attempt);
  // The agent's local lines of (attempt, rank), found through the attempt's host list.
  std::vector<std::string> local_rank_lines(const json& attempt, int rank);

  // GET /runs/{id}/metrics?fields=loss,step_seconds&max_points=100000; {} (and a test failure)
  // when it does not answer 200 with an object.
  json metrics(const std::string& run_id);
  // Steps of GET /runs/{id}/checkpoints items, ascending.
  std::vector<int> checkpoint_steps(const std::string& run_id);

  // Live processes started by this test's agents (carrying the tag, not an agent itself).
  std::vector<pid_t> rank_processes() const;
  // SIGKILL to tagged processes whose test binary is gone (a crash or a ctest timeout).
  static void kill_orphans_of_dead_tests();

 private:
  std::unique_ptr<it::TempDir> dir_;
  std::unique_ptr<it::PrivatePostgres> private_pg_;
  std::unique_ptr<it::Podium> podium_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::map<std::string, std::string> worker_tokens_;
  std::string tag_;
  std::pair<int, int> ports_{0, 0};
};

// "att_1 #1 running slices=1 steps 0..14 resumed=- class=- | r0 s0h0 wkr_.. running pid 12 ..."
std::string describe_attempts(const std::vector<json>& attempts);
// The hosts of an attempt by rank: {rank -> host json}.
std::map<int, json> hosts_by_rank(const json& attempt);
// The host reports its rank's pid (a positive integer).
bool has_pid(const json& host);
// A host dies: its agent, then the rank process it ran and that process's group, with SIGKILL
// (the agent's death alone would leave the rank, which runs in a session of its own).
void lose_host(WorkerProcess& host, pid_t rank_pid);

}  // namespace podium::e2e
