#pragma once
// Everything about one rank on this host, from its assignment to its `exited` report.
//
// Three threads: the supervisor (start the process, read its pipes into numbered lines, cancel
// escalation, checkpoint scans, final scan), the uploader (log batches in seq order, retried with
// backoff) and the reporter (status and checkpoint reports in order, each retried until
// acknowledged; `exited` only once every line of the rank was acknowledged). The reporter also
// deletes the checkpoints a checkpoint report's answer names (retention) and reports each.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/worker/assignment.h"
#include "engine/worker/clock.h"
#include "engine/worker/control_plane.h"
#include "engine/worker/log_spool.h"
#include "engine/worker/process.h"
#include "engine/worker/process_supervisor.h"

namespace podium::worker {

struct RetryTimings {
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{10000};
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds checkpoint_poll{1000};
  std::chrono::milliseconds exit_linger{2000};  // wait for the pipes' EOF after the exit
};

struct RankContext {
  ControlPlane* api = nullptr;
  ProcessLauncher* launcher = nullptr;
  const Clock* clock = nullptr;
  SpoolBudget* budget = nullptr;
  std::filesystem::path agent_workdir;  // logs/ and spool/ live here; default process cwd
  std::vector<std::string> base_env;    // the agent's environment
  // --run-as another account: the rank starts as it, in a directory it owns.
  std::optional<RunAs> run_as;
  RetryTimings timings;
  SpoolOptions spool;
  // Each line of the rank's output as it is read (podium-worker attach: the engine's own log,
  // `kubectl logs` or slurm-<id>.out, keeps the lines too). Called on the supervisor thread.
  std::function<void(const std::string&)> echo;
  // The environment probe run just before the rank starts (software_probe.h): by the rank's own
  // interpreter when its argv[0] is a Python, else by this one. Empty: no probe (the hermetic
  // tests' scripted launchers).
  std::string probe_python;
  std::chrono::milliseconds probe_timeout{15000};
};

class RankRunner {
 public:
  RankRunner(Assignment assignment, RankContext context);
  ~RankRunner();  // abandons what is left and joins
  RankRunner(const RankRunner&) = delete;
  RankRunner& operator=(const RankRunner&) = delete;

  void start();
  // SIGTERM to the process group now, SIGKILL after `grace`. Before start(): applied at launch.
  void cancel(std::chrono::milliseconds grace);
  // Stop retrying and waiting (the agent's shutdown deadline passed); the process is killed.
  void abandon();

  bool finished() const;  // every thread ended
  bool wait_finished(std::chrono::milliseconds timeout) const;
  bool exit_reported() const;
  // How the process ended, once it did (exit code 127 when it could not be started).
  std::optional<ExitStatus> exit_status() const;

  const Assignment& assignment() const { return assignment_; }
  std::optional<pid_t> pid() const;
  std::chrono::milliseconds grace() const {
    return std::chrono::seconds(assignment_.grace_seconds);
  }

 private:
  struct Report {
    std::string kind;  // "status", "checkpoints" or "checkpoint-deletions"
    nlohmann::json body;
    bool is_exit = false;
  };

  void supervise();
  // The rank's environment, probed with its launch spec (null: no probe or no answer).
  nlohmann::json probe_environment(const LaunchSpec& rank) const;
  void upload();
  void report();
  void enqueue(Report r);
  // The deletions a checkpoint report's answer asks for (checkpoint_deleter.h), done now on the
  // reporter's thread; their outcomes are the next reports.
  void carry_out_deletions(const nlohmann::json& answer);
  void fail_to_start(const std::string& why);
  bool sleep_for(std::chrono::milliseconds d);  // false when abandoned
  bool abandoned() const;
  void thread_done();
  std::string path(const std::string& what) const;

  Assignment assignment_;
  RankContext ctx_;
  std::unique_ptr<LogSpool> spool_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool abandoned_ = false;
  int threads_running_ = 0;
  bool started_ = false;
  bool exit_reported_ = false;
  std::optional<std::chrono::milliseconds> pending_cancel_;
  ProcessSupervisor* supervisor_ = nullptr;  // while the process runs (guarded by mu_)
  std::optional<pid_t> pid_;
  std::optional<ExitStatus> exit_status_;
  std::deque<Report> reports_;
  // Outcomes of the deletions a checkpoint report's answer asked for: sent before anything
  // else still in reports_ (only the reporter thread adds them, while it handles that answer).
  std::deque<Report> deletion_reports_;

  std::thread supervise_thread_;
  std::thread upload_thread_;
  std::thread report_thread_;
};

}  // namespace podium::worker
