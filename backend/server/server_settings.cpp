#include "backend/server/server_settings.h"

#include <filesystem>

extern char** environ;

namespace podium::server {

db::PoolOptions pool_options(const ServerConfig& config, const std::string& conninfo) {
  db::PoolOptions po;
  po.conninfo = conninfo;
  po.max_connections = config.db_pool_size;
  // Connections only heartbeats may take (db::PriorityScope in api::App), one per thread of
  // their lane (http::ServerOptions::priority_threads).
  po.reserved_for_priority = http::ServerOptions{}.priority_threads;
  po.acquire_timeout = config.db_acquire_timeout;
  po.connect_timeout = config.db_connect_timeout;
  po.statement_timeout = config.db_statement_timeout;
  return po;
}

sched::EngineSettings engine_settings(const ServerConfig& config) {
  sched::EngineSettings engine;
  engine.heartbeat_deadline = config.heartbeat_deadline;
  engine.heartbeat_interval = config.heartbeat_interval;
  engine.cancel_grace = config.cancel_grace;
  engine.coordinator_port_first = config.coordinator_port_first;
  engine.coordinator_port_count = config.coordinator_port_count;
  engine.stall.floor_seconds = static_cast<double>(config.stall_seconds.count());
  engine.stall.step_factor = config.stall_step_factor;
  engine.stall.compile_seconds = static_cast<double>(config.stall_compile_seconds.count());
  engine.stall.limit = config.stall_limit;
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
  return engine;
}

sched::ExternalEngineSettings external_settings(const ServerConfig& config,
                                                const sched::EngineSettings& engine) {
  sched::ExternalEngineSettings s;
  s.server_url = config.public_url;
  s.worker_path = config.executors_worker_path;
  if (s.worker_path.empty()) {
    // The podium-worker built beside this server.
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) s.worker_path = (self.parent_path() / "podium-worker").string();
  }
  s.worker_image = config.executors_worker_image;
  s.output_dir = (std::filesystem::path(engine.launch.output_dir) / "slurm").string();
  std::error_code ec;
  std::filesystem::create_directories(s.output_dir, ec);
  return s;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

http::ServerOptions http_options(const ServerConfig& config, const http::Router& routes) {
  http::ServerOptions so;
  so.host = config.listen_host;
  so.port = config.listen_port;
  so.max_body_bytes = config.max_body_bytes;
  so.routes = &routes;  // lanes and large bodies (code bundles) are declared there
  so.max_header_bytes = config.max_header_bytes;
  so.read_timeout = config.read_timeout;
  so.idle_timeout = config.idle_timeout;
  so.write_timeout = config.write_timeout;
  so.max_connections = config.max_connections;
  so.handler_threads = config.handler_threads;
  so.max_queued_requests = config.handler_queue;
  so.tls_cert_file = config.tls_cert_file;
  so.tls_key_file = config.tls_key_file;
  return so;
}

}  // namespace podium::server
