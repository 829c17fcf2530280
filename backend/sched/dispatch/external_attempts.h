#pragma once
// Attempts of clusters whose executor is an external engine (Slurm, Kubernetes): the database
// side (docs/executors.md).
//
//   1. The dispatcher creates the attempt at once (the engine queues, not Podium): one rank row
//      per host, no worker, no command yet.
//   2. ExternalEngines::drive_once() submits it with a fresh per-attempt token (stored hashed),
//      follows the engine's job (its queue reason becomes the run's waiting_reason), cancels it
//      when the attempt is ending, and records the engine's verdict when the job ends.
//   3. Each rank's `podium-worker attach` joins with that token; when every rank has joined
//      (their addresses are known, rank 0's is the coordinator) the ranks' commands and
//      environments are built exactly as for agents (backend/sched/launch_spec.h).
//   4. Ranks report status, logs and checkpoints on the agents' endpoints; the attempt finishes
//      once every rank ended and the engine's verdict is in (finish_attempt_if_done).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "backend/sched/dispatch/engine_settings.h"
#include "backend/sched/executors/engine_executor.h"

namespace podium::sched {

// The lowest coordinator port of the range, after the one used last, that no live attempt with
// the same coordinator address holds.
int allocate_coordinator_port(db::Transaction& tx, const std::string& address,
                              const EngineSettings& settings);

struct ExternalRun {
  std::string id;
  std::string state;  // queued | recovering
  std::string executor_kind;
  int num_slices = 1;
  int hosts_per_slice = 1;
};

// Writes the attempt (ranks without commands) and moves the run to starting.
void create_external_attempt(db::Transaction& tx, const ExternalRun& run,
                             const std::shared_ptr<spdlog::logger>& log);

struct JoinRequest {
  std::string attempt_id;
  int rank = 0;
  int slice = 0;
  int host = 0;
  std::string address;
  std::string hostname;
  std::string engine_job;
};

// A join the attempt cannot take: the HTTP layer answers 409 (conflict) or 422 (mismatch).
struct JoinRefused : std::runtime_error {
  enum class Kind { conflict, mismatch } kind;
  JoinRefused(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
};

// The rank's assignment (the agents' assignment shape) once every rank joined; nullopt while
// others are still missing.
std::optional<nlohmann::json> join_external_rank(db::Transaction& tx, const JoinRequest& join,
                                                 const EngineSettings& settings);

struct ExternalEngineSettings {
  std::string server_url;
  std::string worker_path;
  std::string worker_image;
  std::string output_dir;
};

class ExternalEngines {
 public:
  ExternalEngines(db::Database& db, EngineSettings engine, ExternalEngineSettings settings,
                  std::map<std::string, std::shared_ptr<EngineExecutor>> executors,
                  std::shared_ptr<spdlog::logger> log);

  // One round: submit, follow, cancel. Returns how many attempts changed.
  int drive_once();

  // The server's own URL once it listens, when public_url does not name one.
  void set_server_url(const std::string& url);

  // The manifest of a run's live or latest attempt, or of the attempt it would get next.
  // nullopt when the run's cluster uses agents.
  std::optional<nlohmann::json> manifest(db::Transaction& tx, const std::string& run_id);

 private:
  int submit_pending();
  int follow_submitted();
  int cancel_ending();
  ExternalEngineSettings settings() const;

  mutable std::mutex mu_;  // guards settings_ (the server URL is learnt after start)
  db::Database& db_;
  EngineSettings engine_;
  ExternalEngineSettings settings_;
  std::map<std::string, std::shared_ptr<EngineExecutor>> executors_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace podium::sched
