#pragma once
// The settings of podium-server's parts, derived from its configuration: the database pool, the
// scheduler engine, the external executors and the HTTP server.

#include <map>
#include <string>

#include "backend/common/config.h"
#include "backend/db/database.h"
#include "backend/http/server.h"
#include "backend/sched/dispatch/external_attempts.h"

namespace podium::server {

db::PoolOptions pool_options(const ServerConfig& config, const std::string& conninfo);

sched::EngineSettings engine_settings(const ServerConfig& config);

// Where Slurm and Kubernetes ranks find the server and podium-worker, and where Slurm output goes
// (created here).
sched::ExternalEngineSettings external_settings(const ServerConfig& config,
                                                const sched::EngineSettings& engine);

// This process's whole environment, for sched::tool_environment to pick from.
std::map<std::string, std::string> process_environment();

// `routes`: the API's route table, which declares each route's lane and body limit.
http::ServerOptions http_options(const ServerConfig& config, const http::Router& routes);

}  // namespace podium::server
