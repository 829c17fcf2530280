#pragma once
// The scheduler loop of a server replica: wakes on NOTIFY podium_runs (a run was submitted, an
// attempt ended, a worker registered) or every second, then
//   1. reaps: ranks whose worker has been silent past the heartbeat deadline are lost; running
//      attempts silent past their stall bound are stalled (stall_watch.h);
//   2. places: queued and recovering runs get whole gangs (backend/sched/placement.h over a
//      snapshot read with FOR UPDATE SKIP LOCKED, so replicas never place the same run or the
//      same cluster twice) and their attempts are written with each rank's command and env;
//   3. checks elastic runs that could grow back to the slices they asked for.
// Everything it decides is in PostgreSQL: a replica that dies loses nothing; another carries on.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <spdlog/logger.h>

#include "backend/db/database.h"
#include "backend/db/notification_hub.h"
#include "backend/sched/dispatch/engine_settings.h"
#include "backend/sched/dispatch/external_attempts.h"
#include "engine/core/plan/elastic_shapes.h"

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

  // Elastic shrink and grow (issue 30 point 5): plans a stored run spec's shapes, min_slices up,
  // like a submission (the server wires api::plan_stored_shapes, before start()). Without one,
  // the DCN layout alone (engine/core/plan/elastic_layout.h) decides which counts are usable.
  using ShapePlanner =
      std::function<std::vector<core::ElasticShape>(db::Transaction&, const nlohmann::json& spec)>;
  void set_shape_planner(ShapePlanner planner) { shape_planner_ = std::move(planner); }

 private:
  void loop();
  // An elastic run's shapes, planned at most every kShapeTtl per run (the spec does not change;
  // its cluster, dataset and model facts may). The first time a plan leaves counts unusable, the
  // run gets an event saying which and why.
  std::vector<core::ElasticShape> elastic_shapes(db::Transaction& tx, const std::string& run_id,
                                                 const std::string& run_state,
                                                 const nlohmann::json& spec, int requested);

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
  ShapePlanner shape_planner_;
  struct CachedShapes {
    std::string spec_text;
    std::chrono::steady_clock::time_point planned_at;
    std::vector<core::ElasticShape> shapes;
    std::string told;  // the unusable-shapes event last written for this run
  };
  std::mutex shapes_mutex_;
  std::map<std::string, CachedShapes> shape_cache_;
  std::thread thread_;
};

}  // namespace podium::sched
