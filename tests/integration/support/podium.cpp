#include "tests/integration/support/podium.h"

#include <stdexcept>

namespace podium::it {

const Reply& require_status(const Reply& r, int status) {
  if (r.status != status)
    throw std::runtime_error("set-up request failed (expected " + std::to_string(status) +
                             "): " + r.describe());
  return r;
}

Podium::Podium() : Podium(Options{}) {}

Podium::Podium(Options options) : Podium(std::move(options), OnServer{}) {}

Podium::Podium(Options options, OnServer database_server) : options_(std::move(options)) {
  db_ = database_server.url.empty() ? std::make_unique<TestDatabase>()
                                    : std::make_unique<TestDatabase>(database_server.url);
  ServerOptions so;
  so.database_url = db_->url();
  so.settings = options_.settings;
  so.name = options_.name;
  so.env = options_.env;
  server_ = std::make_unique<ServerProcess>(so);
  server_->start();
}

Podium::~Podium() {
  // The server goes first: the database is dropped after its sessions are gone.
  server_.reset();
  db_.reset();
}

std::unique_ptr<ServerProcess> Podium::second_server(const std::string& name,
                                                     std::vector<std::string> settings) const {
  ServerOptions so;
  so.database_url = db_->url();
  so.settings = settings.empty() ? options_.settings : std::move(settings);
  so.name = name;
  so.env = options_.env;
  auto s = std::make_unique<ServerProcess>(so);
  s->start();
  return s;
}

int Podium::restart(bool kill) {
  const int status = kill ? server_->kill() : server_->terminate();
  server_->start();
  return status;
}

User Podium::create_user(const std::string& role, const std::optional<std::string>& password,
                         std::string username) {
  if (username.empty()) username = unique_name(role);
  nlohmann::json body = {{"username", username}, {"role", role}};
  if (password) body["password"] = *password;
  auto r = require_status(admin().post("/api/v1/users", body), 201);
  if (!r.json.contains("token") || !r.json["token"].is_string())
    throw std::runtime_error("POST /api/v1/users returned no token: " + r.describe());
  User u;
  u.id = r.json.value("id", "");
  u.username = username;
  u.role = role;
  u.token = r.json["token"].get<std::string>();
  u.api = as(u.token);
  return u;
}

nlohmann::json Podium::create_cluster(const std::string& name, const std::string& accelerator,
                                      const nlohmann::json& extra) {
  // Members may submit command workloads on the tests' clusters (submit_run's runs are
  // `command: ["true"]`); the default policy, admins only, is tested on clusters that say
  // nothing (LaunchPolicy tests) or pass their own launch_policy in `extra`.
  nlohmann::json body = {{"name", name},
                         {"accelerator", accelerator},
                         {"launch_policy", {{"command_roles", {"admin", "member"}}}}};
  for (const auto& [k, v] : extra.items()) body[k] = v;
  return require_status(admin().post("/api/v1/clusters", body), 201).json;
}

std::string Podium::worker_token(const std::string& cluster) {
  auto r = require_status(admin().post("/api/v1/clusters/" + enc(cluster) + "/worker-tokens"), 201);
  if (!r.json.contains("token") || !r.json["token"].is_string())
    throw std::runtime_error("worker-tokens returned no token: " + r.describe());
  return r.json["token"].get<std::string>();
}

nlohmann::json Podium::create_dataset(const Api& who, const std::string& name,
                                      const nlohmann::json& extra) {
  nlohmann::json body = {
      {"name", name}, {"uri", "gs://podium-it/" + name}, {"format", "synthetic"}};
  for (const auto& [k, v] : extra.items()) body[k] = v;
  return require_status(who.post("/api/v1/datasets", body), 201).json;
}

nlohmann::json Podium::run_spec(const std::string& cluster, const std::string& name) {
  return {{"name", name}, {"cluster", cluster}, {"workload", "command"}, {"command", {"true"}}};
}

nlohmann::json Podium::submit_run(const Api& who, const std::string& cluster,
                                  const std::string& name, const nlohmann::json& extra) {
  nlohmann::json body = run_spec(cluster, name.empty() ? unique_name("run") : name);
  for (const auto& [k, v] : extra.items()) body[k] = v;
  return require_status(who.post("/api/v1/runs", body), 201).json;
}

void PodiumTest::SetUp() {
  PODIUM_IT_REQUIRE_DATABASE();
  podium_ = std::make_unique<Podium>(options());
}

void PodiumTest::TearDown() {
  podium_.reset();
}

}  // namespace podium::it
