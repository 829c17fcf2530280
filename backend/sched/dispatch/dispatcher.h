#pragma once
// The scheduler loop of a server replica: wakes on NOTIFY podium_runs (a run was submitted, an
// attempt ended, a worker registered) or every second, then
//   1. reaps: ranks whose worker has been silent past the heartbeat deadline are lost;
//   2. places: queued and recovering runs get whole gangs (backend/sched/placement.h over a
//      snapshot read with FOR UPDATE SKIP LOCKED, so replicas never place the same run or the
//      same cluster twice) and their attempts are written with each rank's command and env;
//   3. checks elastic runs that could grow back to the slices they asked for.
// Everything it decides is in PostgreSQL: a replica that dies loses nothing; another carries on.

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <spdlog/logger.h>

#include "backend/db/database.h"
#include "backend/db/notification_hub.h"
#include "backend/sched/dispatch/engine_settings.h"
#include "backend/sched/dispatch/external_attempts.h"

namespace podium::sched {

class Dispatcher {
 public:
  Dispatcher(db::Database& db, db::NotificationHub& hub, EngineSettings settings,
             std::shared_ptr<spdlog::logger> log);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void start();
  void stop();

  // One round of each duty; they return how many things they changed.
  int reap_once();
  int schedule_once();
  int check_growth_once();

  const EngineSettings& settings() const { return settings_; }

  // Slurm and Kubernetes attempts are driven from the same loop (before start()).
  void set_external_engines(ExternalEngines* engines) { external_ = engines; }

 private:
  void loop();

  db::Database& db_;
  db::NotificationHub& hub_;
  EngineSettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  // Since when this server has been able to hear heartbeats: its start, or the end of the last
  // database outage it saw (a round that failed on the database). Silence before that says
  // nothing about a host.
  std::chrono::steady_clock::time_point hearing_since_;
  bool database_failing_ = false;
  ExternalEngines* external_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace podium::sched
