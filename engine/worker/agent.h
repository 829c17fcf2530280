#pragma once
// podium-worker's agent: registration, heartbeat, the assignment long poll, and the ranks it
// supervises (RankRunner). The process side (flags, signals, stdout) is in main.cpp.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/worker/clock.h"
#include "engine/worker/control_plane.h"
#include "engine/worker/host_notice.h"
#include "engine/worker/log_spool.h"
#include "engine/worker/process.h"
#include "engine/worker/rank_runner.h"
#include "engine/worker/run_as.h"

namespace podium::worker {

struct AgentOptions {
  std::string cluster;
  int slice = 0;
  int host = 0;
  std::filesystem::path workdir;  // absolute
  std::string hostname;
  std::string address;
  int devices = 1;
  uint64_t spool_max_bytes = 256ull * 1024 * 1024;

  int assignment_wait_seconds = 25;
  std::chrono::milliseconds shutdown_flush{10000};  // after the processes ended
  RetryTimings timings;
  SpoolOptions spool;
  // The host's metadata server, watched for preemption and termination notices (none: not
  // watched, and heartbeats say nothing about notices).
  std::shared_ptr<MetadataSource> metadata;
  std::chrono::milliseconds notice_poll{5000};
  // --run-as another account (the agent is root): ranks start as it (engine/worker/run_as.h).
  std::optional<RunAs> run_as;
  // What the host's Python has (engine/worker/software_probe.h), sent when registering; null:
  // nothing to report.
  nlohmann::json software;
  // The interpreter that probes each rank's environment before it starts (RankContext); empty:
  // no probe.
  std::string probe_python;
  // Called once, when the first registration succeeded, with the line main() prints.
  std::function<void(const std::string&)> announce;
};

class Agent {
 public:
  Agent(AgentOptions options, std::shared_ptr<ControlPlane> api,
        std::shared_ptr<ProcessLauncher> launcher, std::shared_ptr<Clock> clock);
  ~Agent();  // stops and joins everything
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Registers, then serves until stop(). Returns the exit code: 0 after stop(), 1 when the
  // server refused the registration (bad token, unknown cluster, slice or host out of range) or
  // the work directory cannot be used.
  int run();
  // Thread-safe: stop the processes as for a cancel, flush lines and statuses (bounded), return.
  void stop();

  std::string worker_id() const;
  const std::string& instance() const { return instance_; }
  size_t active_ranks() const;

 private:
  enum class RegisterOutcome { ok, retry, fatal };
  RegisterOutcome register_once();
  std::string read_credential() const;
  void write_credential(const std::string& credential) const;
  bool ensure_registered();
  void mark_reachable(bool reachable);
  void heartbeat_loop();
  void notice_loop();
  void poll_loop();
  void handle(const nlohmann::json& message);
  void reap_finished();
  nlohmann::json running_list(bool with_pid) const;
  bool wait_stop(std::chrono::milliseconds d);  // true when stop was requested
  void shutdown();
  void clear_stale_spool();

  AgentOptions options_;
  std::shared_ptr<ControlPlane> api_;
  std::shared_ptr<ProcessLauncher> launcher_;
  std::shared_ptr<Clock> clock_;
  SpoolBudget budget_;
  std::string instance_;
  std::vector<std::string> base_env_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  bool stopping_ = false;  // shutdown began: no new processes
  bool stop_heartbeat_ = false;
  std::string worker_id_;
  int heartbeat_seconds_ = 3;
  bool need_register_ = false;
  bool unreachable_ = false;
  bool announced_ = false;
  std::map<std::string, std::unique_ptr<RankRunner>> ranks_;  // by attempt id
  std::set<std::string> seen_attempts_;
  std::set<std::string> cancelled_unknown_;  // cancels for attempts not (yet) assigned here
  std::optional<std::string> notice_;        // what the metadata server announced, if anything
  bool heartbeat_now_ = false;               // a new notice: heartbeat without waiting

  std::mutex register_mu_;
  std::thread heartbeat_thread_;
  std::thread poll_thread_;
  std::thread notice_thread_;
};

// A random hex string (16 bytes of entropy) drawn once per process start.
std::string random_instance();

}  // namespace podium::worker
