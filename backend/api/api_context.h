#pragma once
// What every handler may use: the database, the configuration, metrics, the cursor key.

#include <memory>
#include <string>

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include "backend/common/config.h"
#include "backend/common/credential_cache.h"
#include "backend/common/metrics.h"
#include "backend/common/router.h"
#include "backend/db/database.h"
#include "backend/db/notification_hub.h"
#include "backend/sched/dispatch/engine_settings.h"
#include "backend/sched/dispatch/external_attempts.h"

namespace podium::api {

class RunReadBatcher;

struct ApiContext {
  db::Database& db;
  const ServerConfig& config;
  metrics::Registry& metrics;
  std::string cursor_key;  // MAC key for pagination cursors, from the settings table
  std::shared_ptr<spdlog::logger> log;
  db::NotificationHub& hub;                    // wakes long-polls and live log followers
  sched::EngineSettings engine;                // heartbeat, grace, ports, workload launch settings
  sched::ExternalEngines* external = nullptr;  // Slurm / Kubernetes executors (manifests)
  // Recently verified tokens and sessions (auth.credential_cache_seconds; null: off).
  http::CredentialCache* credentials = nullptr;
  // GET /runs/{id}'s batched reads (run_read_batch.h; null: each request reads on its own).
  RunReadBatcher* run_reads = nullptr;
  // The access log: a line per request, flushed about once a second rather than per line
  // (backend/server/server_log.h); null: the lines go to `log`.
  std::shared_ptr<spdlog::logger> access_log = nullptr;
};

// After a commit that changed credentials (a token revoked, a user disabled or re-roled, a
// session ended, a host registered again, a cluster deleted): this process's next request must
// not be answered from an entry the change made stale. Other replicas hear of it by NOTIFY.
inline void forget_credentials(ApiContext& ctx) {
  if (ctx.credentials) ctx.credentials->forget_all();
}

// Registration functions, one per resource file.
void register_health_routes(http::Router&, ApiContext&);
void register_auth_routes(http::Router&, ApiContext&);
void register_user_routes(http::Router&, ApiContext&);
void register_cluster_routes(http::Router&, ApiContext&);
void register_dataset_routes(http::Router&, ApiContext&);
void register_model_routes(http::Router&, ApiContext&);
void register_accelerator_routes(http::Router&, ApiContext&);
void register_run_routes(http::Router&, ApiContext&);
void register_agent_routes(http::Router&, ApiContext&);
// Prometheus gauges of runs, workers and attempts (read when /metrics is scraped).
void register_engine_metrics(ApiContext&);
void register_run_log_routes(http::Router&, ApiContext&);
void register_attempt_routes(http::Router&, ApiContext&);
void register_run_metrics_routes(http::Router&, ApiContext&);
void register_compare_routes(http::Router&, ApiContext&);
void register_project_routes(http::Router&, ApiContext&);
void register_bundle_routes(http::Router&, ApiContext&);
// After register_run_routes: the import answers with the run as GET /runs/{id} shows it.
void register_import_routes(http::Router&, ApiContext&);
void register_webhook_routes(http::Router&, ApiContext&);

}  // namespace podium::api
