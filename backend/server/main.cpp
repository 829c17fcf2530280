// podium-server: configuration, database (external or embedded), migrations, bootstrap, HTTP.
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <variant>

#include "backend/api/app.h"
#include "backend/api/bootstrap.h"
#include "backend/api/hub_credential_changes.h"
#include "backend/api/plan_check.h"
#include "backend/api/run_read_batch.h"
#include "backend/api/run_submission.h"
#include "backend/api/run_summary_store.h"
#include "backend/common/config.h"
#include "backend/common/open_files_limit.h"
#include "backend/common/periodic_task.h"
#include "backend/common/secrets.h"
#include "backend/db/embedded_postgres.h"
#include "backend/db/migrations.h"
#include "backend/db/notification_hub.h"
#include "backend/http/server.h"
#include "backend/ingest/log_retention.h"
#include "backend/notify/delivery_loop.h"
#include "backend/sched/dispatch/dispatcher.h"
#include "backend/sched/executors/kubernetes_executor.h"
#include "backend/sched/executors/slurm_executor.h"
#include "backend/server/server_log.h"
#include "backend/server/server_settings.h"

extern char** environ;

namespace {

using namespace podium;
using server::jline;

std::map<std::string, std::string> podium_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (kv.rfind("PODIUM_", 0) != 0) continue;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

// The configuration from the flags, the environment and the --config file; an exit code instead
// when the server must not start (--help: 0, a mistake: 2, said on stderr).
std::variant<ServerConfig, int> load_server_config(const std::vector<std::string>& args) {
  ConfigSources sources;
  sources.environment = podium_environment();
  sources.args = args;
  if (auto file = find_config_flag(args)) {
    std::ifstream in(*file);
    if (!in) {
      std::cerr << "podium-server: cannot read config file " << *file << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    sources.yaml_text = ss.str();
    sources.yaml_name = *file;
  }
  auto loaded = load_config(sources);
  if (loaded.show_help) {
    std::cout << config_help();
    return 0;
  }
  if (loaded.error) {
    std::cerr << "podium-server: invalid configuration: " << loaded.error->message << "\n";
    return 2;
  }
  ServerConfig config = loaded.config;
  if (config.web_root.empty() && std::filesystem::is_directory(PODIUM_DEFAULT_WEB_ROOT))
    config.web_root = PODIUM_DEFAULT_WEB_ROOT;
  return config;
}

void raise_file_limit(const ServerConfig& config, spdlog::logger& log) {
  // Every connection is a file, and so are the database's, the logs and the spool.
  const std::uint64_t wanted = static_cast<std::uint64_t>(config.max_connections) +
                               static_cast<std::uint64_t>(config.db_pool_size) + 256;
  const auto files = raise_open_files_limit(wanted);
  if (files.soft < wanted)
    log.warn(jline({{"msg",
                     "open-file limit below what limits.max_connections needs: "
                     "connections beyond it fail; raise LimitNOFILE / ulimit -n"},
                    {"open_files", files.soft},
                    {"needed", wanted}}));
}

// Signals are taken synchronously by this thread; every thread started later inherits the mask.
sigset_t block_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // reload the TLS certificate
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

// PostgreSQL under data_dir when no database_url is configured. False when it failed (said).
bool start_embedded(const ServerConfig& config, spdlog::logger& log,
                    std::unique_ptr<db::EmbeddedPostgres>& embedded, std::string& conninfo) {
  db::EmbeddedPostgresOptions eo;
  eo.data_dir = std::filesystem::absolute(config.data_dir);
  embedded = std::make_unique<db::EmbeddedPostgres>(eo);
  log.info(jline({{"msg", "starting embedded PostgreSQL"}, {"data_dir", eo.data_dir.string()}}));
  try {
    embedded->start();
  } catch (const std::exception& e) {
    std::cerr << "podium-server: embedded PostgreSQL failed to start: " << e.what() << "\n";
    return false;
  }
  conninfo = embedded->conninfo();
  return true;
}

// Migrations and the first administrator. The database may still be starting (a fresh
// container, a restarting server): waits a while. nullopt when it failed (said).
std::optional<api::BootstrapResult> prepare_database(db::Database& database,
                                                     const ServerConfig& config,
                                                     spdlog::logger& log) {
  for (int attempt = 0;; ++attempt) {
    try {
      (void)db::apply_migrations(database, db::embedded_migrations());
      return api::bootstrap(database, config.admin_token);
    } catch (const db::DbError& e) {
      if (e.kind() != db::DbError::Kind::unavailable || attempt >= 30) {
        std::cerr << "podium-server: cannot prepare the database: " << e.what() << "\n";
        return std::nullopt;
      }
      log.warn(jline({{"msg", "database not reachable yet; retrying"}, {"error", e.what()}}));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    } catch (const std::exception& e) {
      std::cerr << "podium-server: cannot prepare the database: " << e.what() << "\n";
      return std::nullopt;
    }
  }
}

void add_pool_metrics(metrics::Registry& registry, db::Database& database) {
  registry.add_collector([&database](std::string& out) {
    auto s = database.stats();
    out += "# HELP podium_db_pool_connections Database pool connections by state.\n";
    out += "# TYPE podium_db_pool_connections gauge\n";
    out += "podium_db_pool_connections{state=\"in_use\"} " + std::to_string(s.in_use) + "\n";
    out += "podium_db_pool_connections{state=\"idle\"} " + std::to_string(s.idle) + "\n";
    out +=
        "# HELP podium_db_pool_max_connections Database pool connections at most "
        "(database.pool_size).\n";
    out += "# TYPE podium_db_pool_max_connections gauge\npodium_db_pool_max_connections " +
           std::to_string(s.max_connections) + "\n";
    out += "# HELP podium_db_pool_waiting Requests waiting for a database connection.\n";
    out += "# TYPE podium_db_pool_waiting gauge\npodium_db_pool_waiting " +
           std::to_string(s.waiting) + "\n";
    out += "# HELP podium_db_errors_total Database errors (all kinds).\n";
    out += "# TYPE podium_db_errors_total counter\npodium_db_errors_total " +
           std::to_string(s.errors) + "\n";
    out += "# HELP podium_build_info Build information.\n# TYPE podium_build_info gauge\n";
    out += "podium_build_info{version=\"" PODIUM_VERSION "\"} 1\n";
  });
}

std::string listen_url(const http::HttpServer& server, const ServerConfig& config) {
  return std::string(server.tls() ? "https://" : "http://") +
         (config.listen_host.find(':') != std::string::npos ? "[" + config.listen_host + "]"
                                                            : config.listen_host) +
         ":" + std::to_string(server.port());
}

// Deletes the log lines of runs past retention.log_lines_days (off when 0).
std::unique_ptr<ingest::LogRetention> start_retention(db::Database& database,
                                                      const ServerConfig& config,
                                                      std::shared_ptr<spdlog::logger> log) {
  ingest::RetentionSettings settings;
  settings.days = config.log_retention_days;
  settings.batch_rows = config.log_retention_batch_rows;
  settings.interval = config.log_retention_interval;
  auto retention = std::make_unique<ingest::LogRetention>(
      database, settings, [log](const ingest::SweepResult& r, const std::string& error) {
        if (!error.empty())
          log->warn(jline({{"msg", "log retention sweep failed"}, {"error", error}}));
        else
          log->info(jline({{"msg", "log retention"},
                           {"lines_deleted", r.lines_deleted},
                           {"runs_purged", r.runs_purged},
                           {"batches", r.batches}}));
      });
  retention->start();
  return retention;
}

// Summaries of runs that finished since the last sweep, so that GET /compare reads them instead
// of every metrics row (backend/api/run_summary_store.h); then the plan-against-actual verdicts
// of runs whose steps became steady (backend/api/plan_check.h).
std::unique_ptr<PeriodicTask> start_summaries(db::Database& database, const ServerConfig& config,
                                              std::shared_ptr<spdlog::logger> log) {
  auto task = std::make_unique<PeriodicTask>(
      config.summary_precompute_interval,
      [&database, options = api::summary_options(config)] {
        // Verdicts first: a finished run's summary is stored once its verdict is in.
        api::decide_plan_checks(database, 200, options);
        // In rounds of 50, so that a backlog (after an upgrade) is done without a pause.
        while (api::precompute_summaries(database, 50, options) == 50) {
        }
      },
      [log](const std::exception& e) {
        log->warn(jline({{"msg", "summary precompute failed"}, {"error", e.what()}}));
      });
  task->start();
  return task;
}

// Serves until SIGTERM or SIGINT (returned); SIGHUP reloads the TLS certificate.
int serve_until_stopped(const sigset_t& signals, http::HttpServer& server, spdlog::logger& log) {
  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    const std::string error = server.reload_tls();
    if (error.empty())
      log.info(
          jline({{"msg", server.tls() ? "TLS certificate reloaded" : "SIGHUP: no TLS to reload"}}));
    else
      log.error(jline(
          {{"msg", "TLS certificate reload failed; the previous one stays"}, {"error", error}}));
  }
  return sig;
}

int run(int argc, char** argv) {
  auto loaded = load_server_config(std::vector<std::string>(argv + 1, argv + argc));
  if (const int* exit_code = std::get_if<int>(&loaded)) return *exit_code;
  ServerConfig& config = std::get<ServerConfig>(loaded);
  const server::ServerLoggers loggers = server::make_loggers(config);
  const auto& log = loggers.log;
  // Libraries log through the default logger: same sink and format as the access log.
  spdlog::set_default_logger(log);
  secrets::init();
  raise_file_limit(config, *log);
  const sigset_t signals = block_signals();
  // After the signals are blocked: the flusher is a thread, and a thread started before would
  // take SIGTERM or SIGHUP itself (the default action ends the process) instead of sigwait.
  server::flush_access_log_every(std::chrono::seconds(1));

  std::unique_ptr<db::EmbeddedPostgres> embedded;
  std::string conninfo = config.database_url;
  if (conninfo.empty() && !start_embedded(config, *log, embedded, conninfo)) return 1;
  db::Database database(server::pool_options(config, conninfo));
  const auto boot = prepare_database(database, config, *log);
  if (!boot) return 1;

  metrics::Registry registry;
  add_pool_metrics(registry, database);
  db::NotificationHub hub(conninfo,
                          {"podium_runs", "podium_agents", "podium_logs", api::kAuthChannel});
  hub.start();
  const sched::EngineSettings engine = server::engine_settings(config);
  // External executors: the engines' tools get PATH, HOME, SLURM_CONF, KUBECONFIG and nothing
  // else of this process's environment (its database URL and tokens stay here).
  const auto tool_env = sched::tool_environment(server::process_environment());
  auto runner = sched::make_posix_command_runner();
  sched::ExternalEngines external(
      database, engine, server::external_settings(config, engine),
      {{"slurm", std::make_shared<sched::SlurmEngine>(runner, tool_env)},
       {"kubernetes", std::make_shared<sched::KubernetesEngine>(runner, tool_env)}},
      log);

  api::HubCredentialChanges credential_changes(hub);
  http::CredentialCacheOptions credential_options;
  credential_options.ttl = config.credential_cache_ttl;
  http::CredentialCache credentials(credential_changes, credential_options);
  // GET /runs/{id}'s reads, batched (backend/api/run_read_batch.h): started once the HTTP
  // server can be woken, stopped after it drained.
  api::RunReadBatcher run_reads(database);
  api::ApiContext ctx{database,
                      config,
                      registry,
                      boot->cursor_key,
                      log,
                      hub,
                      engine,
                      &external,
                      config.credential_cache_ttl.count() > 0 ? &credentials : nullptr,
                      &run_reads,
                      loggers.access};
  api::App app(ctx);
  api::register_engine_metrics(ctx);
  sched::Dispatcher dispatcher(database, hub, engine, log);
  dispatcher.set_external_engines(&external);
  // Elastic shrink and grow plan each slice count like a submission (run_submission.h).
  dispatcher.set_shape_planner(api::plan_stored_shapes);

  const http::ServerOptions server_options = server::http_options(config, app.router());
  http::HttpServer server(
      server_options, [&app](http::Request& req) { return app.handle(req); },
      [&log, &registry](const http::RejectedRequest& r) {
        registry.observe_request("-", "(rejected)", r.status, 0);
        log->info(jline({{"msg", "request rejected"},
                         {"status", r.status},
                         {"reason", r.reason},
                         {"remote", r.remote_address}}));
      });
  // Where a request waits off the CPU: for a handler thread (this gauge), then for a database
  // connection (podium_db_pool_waiting). bench/limits.py samples both under load.
  registry.add_collector([&server](std::string& out) {
    out += "# HELP podium_http_queued_requests Requests waiting for a handler thread.\n";
    out += "# TYPE podium_http_queued_requests gauge\npodium_http_queued_requests " +
           std::to_string(server.queued_requests()) + "\n";
  });
  registry.add_collector([&run_reads](std::string& out) {
    out += "# HELP podium_run_read_batches_total Queries that read runs for GET /runs/{id}.\n";
    out += "# TYPE podium_run_read_batches_total counter\npodium_run_read_batches_total " +
           std::to_string(run_reads.batches()) + "\n";
    out += "# HELP podium_run_reads_total GET /runs/{id} reads answered by those queries.\n";
    out += "# TYPE podium_run_reads_total counter\npodium_run_reads_total " +
           std::to_string(run_reads.reads()) + "\n";
  });
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "podium-server: " << e.what() << "\n";
    return 1;
  }
  // Reads that arrived since start() are queued and answered now. The batcher stops before the
  // server it wakes goes away (after the server's own stop on the way out).
  run_reads.start(
      [&server](const std::string& channel, const std::string& key) { server.wake(channel, key); });
  struct StopReads {
    api::RunReadBatcher& reads;
    ~StopReads() { reads.stop(); }
  } stop_reads{run_reads};
  // NOTIFY wakes the long-polls and log followers the HTTP layer keeps parked. The observer is
  // removed before the server goes away (the hub outlives it).
  hub.set_observer(
      [&server](const std::string& channel, const std::string& key) { server.wake(channel, key); });
  struct ForgetObserver {
    db::NotificationHub& hub;
    ~ForgetObserver() { hub.set_observer({}); }
  } forget_observer{hub};

  const std::string url = listen_url(server, config);
  if (config.public_url.empty()) {
    const bool wildcard = config.listen_host == "0.0.0.0" || config.listen_host == "::";
    external.set_server_url(wildcard ? "http://127.0.0.1:" + std::to_string(server.port()) : url);
  }
  dispatcher.start();
  auto retention = start_retention(database, config, log);
  auto summaries = start_summaries(database, config, log);
  // Webhook deliveries from the outbox in PostgreSQL (backend/notify/delivery_loop.h).
  notify::DeliveryLoop webhooks(
      database,
      notify::delivery_settings(config, config.public_url.empty() ? url : config.public_url),
      config.webhooks_delivery_threads, config.webhooks_poll_interval, log);
  webhooks.start();
  // The sizes say what limits.handler_threads and database.pool_size came to (0: scaled to the
  // cores).
  log->info(jline({{"msg", "listening"},
                   {"url", url},
                   {"embedded_database", embedded != nullptr},
                   {"handler_threads", config.handler_threads},
                   {"database_pool_size", config.db_pool_size}}));
  // Plain lines for people and scripts (the token is never written to the structured log).
  std::cout << "podium-server listening on " << url << std::endl;
  if (boot->generated_admin_token)
    std::cout << "admin token (shown once, store it now): " << *boot->generated_admin_token
              << std::endl;

  const int sig = serve_until_stopped(signals, server, *log);
  log->info(jline({{"msg", "shutting down"}, {"signal", sig}}));
  retention->stop();
  webhooks.stop();
  dispatcher.stop();
  hub.stop();  // wakes long-polls and log streams so the HTTP layer can drain them
  server.stop(std::chrono::duration_cast<std::chrono::milliseconds>(config.shutdown_grace));
  database.close();
  if (embedded) embedded->stop();
  log->info(jline({{"msg", "stopped"}}));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "podium-server: fatal: " << e.what() << "\n";
    return 1;
  }
}
