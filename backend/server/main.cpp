// podium-server: configuration, database (external or embedded), migrations, bootstrap, HTTP.
#include <signal.h>
#include <unistd.h>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "backend/api/app.h"
#include "backend/api/bootstrap.h"
#include "backend/api/hub_credential_changes.h"
#include "backend/api/plan_check.h"
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
#include "backend/sched/dispatch/dispatcher.h"
#include "backend/sched/executors/kubernetes_executor.h"
#include "backend/sched/executors/slurm_executor.h"

extern char** environ;

namespace {

using namespace podium;

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

// Structured messages are JSON objects already; plain ones (from libraries) become JSON strings,
// so every line of the log stays parseable.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    std::string out;
    if (!text.empty() && text.front() == '{' &&
        !nlohmann::json::parse(text, nullptr, false).is_discarded())
      out = std::string(text);
    else
      out = nlohmann::json(std::string(text))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

std::shared_ptr<spdlog::logger> make_logger(const ServerConfig& c) {
  auto logger = spdlog::stdout_logger_mt("podium");
  if (c.log_format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","event":%*})");
    logger->set_formatter(std::move(formatter));
  } else
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(c.log_level));
  logger->flush_on(spdlog::level::info);
  return logger;
}

std::string jline(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
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
  auto log = make_logger(config);
  // Libraries log through the default logger: same sink and format as the access log.
  spdlog::set_default_logger(log);
  secrets::init();
  {
    // Every connection is a file, and so are the database's, the logs and the spool.
    const std::uint64_t wanted = static_cast<std::uint64_t>(config.max_connections) +
                                 static_cast<std::uint64_t>(config.db_pool_size) + 256;
    const auto files = raise_open_files_limit(wanted);
    if (files.soft < wanted)
      log->warn(jline({{"msg",
                        "open-file limit below what limits.max_connections needs: "
                        "connections beyond it fail; raise LimitNOFILE / ulimit -n"},
                       {"open_files", files.soft},
                       {"needed", wanted}}));
  }

  // Signals are taken synchronously by this thread; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // reload the TLS certificate
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<db::EmbeddedPostgres> embedded;
  std::string conninfo = config.database_url;
  if (conninfo.empty()) {
    db::EmbeddedPostgresOptions eo;
    eo.data_dir = std::filesystem::absolute(config.data_dir);
    embedded = std::make_unique<db::EmbeddedPostgres>(eo);
    log->info(jline({{"msg", "starting embedded PostgreSQL"}, {"data_dir", eo.data_dir.string()}}));
    try {
      embedded->start();
    } catch (const std::exception& e) {
      std::cerr << "podium-server: embedded PostgreSQL failed to start: " << e.what() << "\n";
      return 1;
    }
    conninfo = embedded->conninfo();
  }

  db::PoolOptions po;
  po.conninfo = conninfo;
  po.max_connections = config.db_pool_size;
  // Connections only heartbeats may take (db::PriorityScope in api::App), one per thread of
  // their lane (http::ServerOptions::priority_threads).
  po.reserved_for_priority = http::ServerOptions{}.priority_threads;
  po.acquire_timeout = config.db_acquire_timeout;
  po.connect_timeout = config.db_connect_timeout;
  po.statement_timeout = config.db_statement_timeout;
  db::Database database(po);

  // The database may still be starting (a fresh container, a restarting server): wait a while.
  api::BootstrapResult boot;
  for (int attempt = 0;; ++attempt) {
    try {
      auto outcome = db::apply_migrations(database, db::embedded_migrations());
      (void)outcome;
      boot = api::bootstrap(database, config.admin_token);
      break;
    } catch (const db::DbError& e) {
      if (e.kind() != db::DbError::Kind::unavailable || attempt >= 30) {
        std::cerr << "podium-server: cannot prepare the database: " << e.what() << "\n";
        return 1;
      }
      log->warn(jline({{"msg", "database not reachable yet; retrying"}, {"error", e.what()}}));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    } catch (const std::exception& e) {
      std::cerr << "podium-server: cannot prepare the database: " << e.what() << "\n";
      return 1;
    }
  }

  metrics::Registry registry;
  registry.add_collector([&database](std::string& out) {
    auto s = database.stats();
    out += "# HELP podium_db_pool_connections Database pool connections by state.\n";
    out += "# TYPE podium_db_pool_connections gauge\n";
    out += "podium_db_pool_connections{state=\"in_use\"} " + std::to_string(s.in_use) + "\n";
    out += "podium_db_pool_connections{state=\"idle\"} " + std::to_string(s.idle) + "\n";
    out += "# HELP podium_db_pool_waiting Requests waiting for a database connection.\n";
    out += "# TYPE podium_db_pool_waiting gauge\npodium_db_pool_waiting " +
           std::to_string(s.waiting) + "\n";
    out += "# HELP podium_db_errors_total Database errors (all kinds).\n";
    out += "# TYPE podium_db_errors_total counter\npodium_db_errors_total " +
           std::to_string(s.errors) + "\n";
    out += "# HELP podium_build_info Build information.\n# TYPE podium_build_info gauge\n";
    out += "podium_build_info{version=\"" PODIUM_VERSION "\"} 1\n";
  });

  db::NotificationHub hub(conninfo,
                          {"podium_runs", "podium_agents", "podium_logs", api::kAuthChannel});
  hub.start();
  sched::EngineSettings engine;
  engine.heartbeat_deadline = config.heartbeat_deadline;
  engine.heartbeat_interval = config.heartbeat_interval;
  engine.cancel_grace = config.cancel_grace;
  engine.coordinator_port_first = config.coordinator_port_first;
  engine.coordinator_port_count = config.coordinator_port_count;
  // Unset: the environment this build's scripts/setup.sh made, where it exists (a server run from
  // its source tree with agents on the same machine, as the demo), else python3 on the hosts.
  engine.launch.python = !config.workloads_python.empty() ? config.workloads_python
                         : std::filesystem::exists(PODIUM_DEFAULT_PYTHON)
                             ? std::string(PODIUM_DEFAULT_PYTHON)
                             : std::string("python3");
  engine.launch.reference_dir = config.workloads_reference_dir.empty()
                                    ? std::string(PODIUM_DEFAULT_REFERENCE_DIR)
                                    : config.workloads_reference_dir;
  engine.launch.output_dir =
      std::filesystem::absolute(config.workloads_output_dir.empty()
                                    ? std::filesystem::path(config.data_dir) / "outputs"
                                    : std::filesystem::path(config.workloads_output_dir))
          .lexically_normal()
          .string();
  engine.launch.grace_seconds = static_cast<int>(config.cancel_grace.count());

  // External executors: the engines' tools get PATH, HOME, SLURM_CONF, KUBECONFIG and nothing
  // else of this process's environment (its database URL and tokens stay here).
  std::map<std::string, std::string> server_env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos)
      server_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const auto tool_env = sched::tool_environment(server_env);
  auto runner = sched::make_posix_command_runner();
  sched::ExternalEngineSettings external_settings;
  external_settings.server_url = config.public_url;
  external_settings.worker_path = config.executors_worker_path;
  if (external_settings.worker_path.empty()) {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) external_settings.worker_path = (self.parent_path() / "podium-worker").string();
  }
  external_settings.worker_image = config.executors_worker_image;
  external_settings.output_dir =
      (std::filesystem::path(engine.launch.output_dir) / "slurm").string();
  {
    std::error_code ec;
    std::filesystem::create_directories(external_settings.output_dir, ec);
  }
  sched::ExternalEngines external(
      database, engine, external_settings,
      {{"slurm", std::make_shared<sched::SlurmEngine>(runner, tool_env)},
       {"kubernetes", std::make_shared<sched::KubernetesEngine>(runner, tool_env)}},
      log);

  api::HubCredentialChanges credential_changes(hub);
  http::CredentialCacheOptions credential_options;
  credential_options.ttl = config.credential_cache_ttl;
  http::CredentialCache credentials(credential_changes, credential_options);
  api::ApiContext ctx{
      database,        config,    registry,
      boot.cursor_key, log,       hub,
      engine,          &external, config.credential_cache_ttl.count() > 0 ? &credentials : nullptr};
  api::App app(ctx);
  api::register_engine_metrics(ctx);
  sched::Dispatcher dispatcher(database, hub, engine, log);
  dispatcher.set_external_engines(&external);

  http::ServerOptions so;
  so.host = config.listen_host;
  so.port = config.listen_port;
  so.max_body_bytes = config.max_body_bytes;
  so.routes = &app.router();  // lanes and large bodies (code bundles) are declared there
  so.max_header_bytes = config.max_header_bytes;
  so.read_timeout = config.read_timeout;
  so.idle_timeout = config.idle_timeout;
  so.write_timeout = config.write_timeout;
  so.max_connections = config.max_connections;
  so.handler_threads = config.handler_threads;
  so.max_queued_requests = config.handler_queue;
  so.tls_cert_file = config.tls_cert_file;
  so.tls_key_file = config.tls_key_file;
  http::HttpServer server(
      so, [&app](http::Request& req) { return app.handle(req); },
      [&log, &registry](const http::RejectedRequest& r) {
        registry.observe_request("-", "(rejected)", r.status, 0);
        log->info(jline({{"msg", "request rejected"},
                         {"status", r.status},
                         {"reason", r.reason},
                         {"remote", r.remote_address}}));
      });
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "podium-server: " << e.what() << "\n";
    return 1;
  }
  // NOTIFY wakes the long-polls and log followers the HTTP layer keeps parked. The observer is
  // removed before the server goes away (the hub outlives it).
  hub.set_observer(
      [&server](const std::string& channel, const std::string& key) { server.wake(channel, key); });
  struct ForgetObserver {
    db::NotificationHub& hub;
    ~ForgetObserver() { hub.set_observer({}); }
  } forget_observer{hub};

  const std::string url =
      std::string(server.tls() ? "https://" : "http://") +
      (config.listen_host.find(':') != std::string::npos ? "[" + config.listen_host + "]"
                                                         : config.listen_host) +
      ":" + std::to_string(server.port());
  if (config.public_url.empty()) {
    const bool wildcard = config.listen_host == "0.0.0.0" || config.listen_host == "::";
    external.set_server_url(wildcard ? "http://127.0.0.1:" + std::to_string(server.port()) : url);
  }
  dispatcher.start();
  // Deletes the log lines of runs past retention.log_lines_days (off when 0).
  ingest::RetentionSettings retention_settings;
  retention_settings.days = config.log_retention_days;
  retention_settings.batch_rows = config.log_retention_batch_rows;
  retention_settings.interval = config.log_retention_interval;
  ingest::LogRetention retention(
      database, retention_settings, [&log](const ingest::SweepResult& r, const std::string& error) {
        if (!error.empty())
          log->warn(jline({{"msg", "log retention sweep failed"}, {"error", error}}));
        else
          log->info(jline({{"msg", "log retention"},
                           {"lines_deleted", r.lines_deleted},
                           {"runs_purged", r.runs_purged},
                           {"batches", r.batches}}));
      });
  retention.start();
  // Summaries of runs that finished since the last sweep, so that GET /compare reads them
  // instead of every metrics row (backend/api/run_summary_store.h); then the plan-against-actual
  // verdicts of runs whose steps became steady (backend/api/plan_check.h).
  const api::SummaryOptions summary_options = api::summary_options(config);
  PeriodicTask summaries(
      config.summary_precompute_interval,
      [&database, &summary_options] {
        // Verdicts first: a finished run's summary is stored once its verdict is in.
        api::decide_plan_checks(database, 200, summary_options);
        // In rounds of 50, so that a backlog (after an upgrade) is done without a pause.
        while (api::precompute_summaries(database, 50, summary_options) == 50) {
        }
      },
      [&log](const std::exception& e) {
        log->warn(jline({{"msg", "summary precompute failed"}, {"error", e.what()}}));
      });
  summaries.start();
  log->info(
      jline({{"msg", "listening"}, {"url", url}, {"embedded_database", embedded != nullptr}}));
  // Plain lines for people and scripts (the token is never written to the structured log).
  std::cout << "podium-server listening on " << url << std::endl;
  if (boot.generated_admin_token)
    std::cout << "admin token (shown once, store it now): " << *boot.generated_admin_token
              << std::endl;

  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    const std::string error = server.reload_tls();
    if (error.empty())
      log->info(
          jline({{"msg", server.tls() ? "TLS certificate reloaded" : "SIGHUP: no TLS to reload"}}));
    else
      log->error(jline(
          {{"msg", "TLS certificate reload failed; the previous one stays"}, {"error", error}}));
  }
  log->info(jline({{"msg", "shutting down"}, {"signal", sig}}));
  retention.stop();
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
