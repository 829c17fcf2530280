// The authorization matrix: every route registered in backend/api x every kind of caller.
//
// The table below lists each route explicitly with its access class and the status each caller
// gets. A second test reads backend/api/*.cpp and fails when a route is registered there but not
// in the table (or with another access class), so a new route cannot skip this matrix.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

enum Who { kNone, kBadToken, kViewer, kMember, kOtherMember, kAdmin, kWorker, kWhoCount };
const std::array<const char*, kWhoCount> kWhoNames = {
    "no token", "bad token", "viewer", "member", "other member", "admin", "worker"};

// What a row sends: the concrete path (ids filled in) and the body.
struct Call {
  std::string path;
  json body = nullptr;
  // The "worker" caller uses the host's own credential (issued at registration) rather than
  // the cluster's worker token, as a real agent does after registering.
  bool host_credential = false;
  // Sent byte for byte instead of `body` when set (a code bundle).
  std::optional<std::string> raw = std::nullopt;
};

// A small code bundle; each call makes a new one so that every caller's upload is a first one.
std::pair<std::string, std::string> fresh_bundle() {
  bundle::BundleWriter w;
  w.add_file("train.py", false, "print('" + unique_name("b") + "')\n");
  auto bytes = w.finish();
  auto digest = bundle::bundle_digest(bytes);
  return {digest, bytes};
}

// The smallest model config POST /models accepts (MaxText keys as JSON).
json tiny_model() {
  return {{"base_emb_dim", 64},  {"base_num_query_heads", 2},    {"base_num_kv_heads", 2},
          {"base_mlp_dim", 128}, {"base_num_decoder_layers", 2}, {"vocab_size", 256},
          {"head_dim", 32}};
}

// Resources the rows act on. "member" owns the shared run and dataset; "other member" does not.
struct World {
  Podium& p;
  std::array<std::string, kWhoCount> tokens;
  User member, other, viewer;
  std::string cluster = "shared";
  std::string run_id, dataset_id, target_user_id, bundle;
  std::string login_user = "login-user", login_password = "login-password-1";

  explicit World(Podium& podium) : p(podium) {
    viewer = p.create_user("viewer");
    member = p.create_user("member");
    other = p.create_user("member");
    p.create_user("viewer", login_password, login_user);
    target_user_id = p.create_user("member").id;
    p.create_cluster(cluster, "cpu-1");
    tokens = {"",
              "pdm_this_token_does_not_exist_0000000000",
              viewer.token,
              member.token,
              other.token,
              p.server().admin_token(),
              p.worker_token(cluster)};
    auto [digest, bytes] = fresh_bundle();
    require_status(member.api.raw("PUT", "/api/v1/bundles/" + digest, bytes), 201);
    bundle = digest;
    run_id = p.submit_run(member.api, cluster, "shared-run")["id"].get<std::string>();
    dataset_id = p.create_dataset(member.api, "shared-ds")["id"].get<std::string>();
  }

  // The shared cluster's one host registered through the agent API, and the attempt the
  // dispatcher placed the shared run on, with its assignment fetched (so later long-polls of
  // this worker find nothing and answer 204).
  std::string worker_id, attempt_id, host_credential;
  std::string agent_attempt() {
    if (!attempt_id.empty()) return attempt_id;
    Api registrar(p.url(), tokens[kWorker]);
    auto reg = require_status(
        registrar.post(
            "/api/v1/agent/register",
            json{{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"instance", "authz"}}),
        200);
    worker_id = reg.json["worker_id"];
    host_credential = reg.json["credential"];
    Api agent(p.url(), host_credential);
    auto a = require_status(
        agent.get("/api/v1/agent/assignment?worker_id=" + worker_id + "&wait=20"), 200);
    if (!a.json.contains("attempt_id"))
      throw std::runtime_error("expected an assignment, got " + a.body);
    attempt_id = a.json["attempt_id"];
    return attempt_id;
  }

  // A model "member" added (POST /models), for the owner-only routes.
  std::string member_model() {
    const std::string name = unique_name("m");
    require_status(member.api.post("/api/v1/models", {{"name", name}, {"config", tiny_model()}}),
                   201);
    return name;
  }
  // A project and a saved compare "member" created, for the creator-only routes.
  std::string member_project() {
    const std::string name = unique_name("prj");
    require_status(member.api.post("/api/v1/projects", {{"name", name}}), 201);
    return name;
  }
  std::string member_compare() {
    auto c = require_status(
        member.api.post("/api/v1/compares",
                        {{"name", "matrix"}, {"runs", {run_id, fresh_member_run(false)}}}),
        201);
    return c.json["id"];
  }
  std::string fresh_cluster() { return p.create_cluster(unique_name("tmp"), "cpu-1")["id"]; }
  std::string fresh_member_run(bool finished) {
    std::string id = p.submit_run(member.api, cluster)["id"];
    if (finished) require_status(member.api.post("/api/v1/runs/" + id + "/cancel"), 200);
    return id;
  }
};

// Expected statuses per caller for each access class; S is the success status of the route.
using Expect = std::array<int, kWhoCount>;
Expect anyone(int s) {
  return {s, s, s, s, s, s, s};
}
Expect readers(int s) {
  return {401, 401, s, s, s, s, 403};
}
Expect writers(int s) {
  return {401, 401, 403, s, s, s, 403};
}
Expect admins(int s) {
  return {401, 401, 403, 403, 403, s, 403};
}
// Members manage only their own: the resource belongs to "member".
Expect owners(int s) {
  return {401, 401, 403, s, 403, s, 403};
}
// A token of "member": others do not see it (404, not 403: its existence is not revealed).
Expect own_token(int s) {
  return {401, 401, 404, s, 404, s, 403};
}
Expect agents(int s) {
  return {401, 401, 403, 403, 403, 403, s};
}

struct Row {
  std::string method;
  std::string pattern;  // exactly as registered
  std::string access;   // http::Access::<access> in the registration
  std::function<Call(World&)> prepare;
  Expect expect;
};

std::vector<Row> routes() {
  auto fixed = [](std::string path, json body = nullptr) {
    return [path, body](World&) { return Call{path, body}; };
  };
  return {
      // health_routes.cpp
      {"GET", "/healthz", "open", fixed("/healthz"), anyone(200)},
      {"GET", "/readyz", "open", fixed("/readyz"), anyone(200)},
      {"GET", "/metrics", "open", fixed("/metrics"), anyone(200)},
      // auth_routes.cpp
      {"POST", "/api/v1/auth/login", "open",
       [](World& w) {
         return Call{"/api/v1/auth/login",
                     {{"username", w.login_user}, {"password", w.login_password}}};
       },
       anyone(200)},
      {"POST", "/api/v1/auth/logout", "reader", fixed("/api/v1/auth/logout"), readers(204)},
      {"GET", "/api/v1/auth/me", "reader", fixed("/api/v1/auth/me"), readers(200)},
      {"GET", "/api/v1/tokens", "reader", fixed("/api/v1/tokens"), readers(200)},
      {"POST", "/api/v1/tokens", "reader", fixed("/api/v1/tokens", {{"name", "matrix"}}),
       readers(201)},
      {"DELETE", "/api/v1/tokens/{id}", "reader",
       [](World& w) {
         auto t = require_status(w.member.api.post("/api/v1/tokens", {{"name", "doomed"}}), 201);
         return Call{"/api/v1/tokens/" + t.json["id"].get<std::string>()};
       },
       own_token(204)},
      // user_routes.cpp
      {"GET", "/api/v1/users", "admin", fixed("/api/v1/users"), admins(200)},
      {"POST", "/api/v1/users", "admin",
       [](World&) {
         return Call{"/api/v1/users", {{"username", unique_name("new")}, {"role", "viewer"}}};
       },
       admins(201)},
      {"GET", "/api/v1/users/{id}", "admin",
       [](World& w) { return Call{"/api/v1/users/" + w.target_user_id}; }, admins(200)},
      {"PATCH", "/api/v1/users/{id}", "admin",
       [](World& w) {
         return Call{"/api/v1/users/" + w.target_user_id, {{"role", "viewer"}}};
       },
       admins(200)},
      // cluster_routes.cpp
      {"GET", "/api/v1/clusters", "reader", fixed("/api/v1/clusters"), readers(200)},
      {"POST", "/api/v1/clusters", "admin",
       [](World&) {
         return Call{"/api/v1/clusters", {{"name", unique_name("new")}, {"accelerator", "cpu-1"}}};
       },
       admins(201)},
      {"GET", "/api/v1/clusters/{id}", "reader",
       [](World& w) { return Call{"/api/v1/clusters/" + w.cluster}; }, readers(200)},
      {"PATCH", "/api/v1/clusters/{id}", "admin",
       [](World& w) {
         return Call{"/api/v1/clusters/" + w.cluster, {{"zone", "us-east5-a"}}};
       },
       admins(200)},
      {"DELETE", "/api/v1/clusters/{id}", "admin",
       [](World& w) { return Call{"/api/v1/clusters/" + w.fresh_cluster()}; }, admins(204)},
      {"GET", "/api/v1/clusters/{id}/workers", "reader",
       [](World& w) { return Call{"/api/v1/clusters/" + w.cluster + "/workers"}; }, readers(200)},
      {"GET", "/api/v1/clusters/{id}/worker-tokens", "admin",
       [](World& w) { return Call{"/api/v1/clusters/" + w.cluster + "/worker-tokens"}; },
       admins(200)},
      {"POST", "/api/v1/clusters/{id}/worker-tokens", "admin",
       [](World& w) { return Call{"/api/v1/clusters/" + w.cluster + "/worker-tokens"}; },
       admins(201)},
      {"DELETE", "/api/v1/clusters/{id}/worker-tokens/{token_id}", "admin",
       [](World& w) {
         auto t = require_status(
             w.p.admin().post("/api/v1/clusters/" + w.cluster + "/worker-tokens"), 201);
         return Call{"/api/v1/clusters/" + w.cluster + "/worker-tokens/" +
                     t.json["id"].get<std::string>()};
       },
       admins(204)},
      {"GET", "/api/v1/clusters/{id}/provisioning", "reader",
       [](World& w) { return Call{"/api/v1/clusters/" + w.cluster + "/provisioning"}; },
       readers(200)},
      // dataset_routes.cpp
      {"GET", "/api/v1/datasets", "reader", fixed("/api/v1/datasets"), readers(200)},
      {"POST", "/api/v1/datasets", "writer",
       [](World&) {
         return Call{"/api/v1/datasets",
                     {{"name", unique_name("ds")}, {"uri", "gs://b/x"}, {"format", "synthetic"}}};
       },
       writers(201)},
      {"GET", "/api/v1/datasets/{id}", "reader",
       [](World& w) { return Call{"/api/v1/datasets/" + w.dataset_id}; }, readers(200)},
      {"DELETE", "/api/v1/datasets/{id}", "writer",
       [](World& w) {
         return Call{"/api/v1/datasets/" +
                     w.p.create_dataset(w.member.api, unique_name("ds"))["id"].get<std::string>()};
       },
       owners(204)},
      // model_routes.cpp
      {"GET", "/api/v1/models", "reader", fixed("/api/v1/models"), readers(200)},
      {"GET", "/api/v1/models/{name}", "reader", fixed("/api/v1/models/llama2-7b"), readers(200)},
      {"POST", "/api/v1/models", "writer",
       [](World&) {
         return Call{"/api/v1/models", {{"name", unique_name("m")}, {"config", tiny_model()}}};
       },
       writers(201)},
      {"PATCH", "/api/v1/models/{name}", "writer",
       [](World& w) {
         return Call{"/api/v1/models/" + w.member_model(), {{"description", "changed"}}};
       },
       owners(200)},
      {"DELETE", "/api/v1/models/{name}", "writer",
       [](World& w) { return Call{"/api/v1/models/" + w.member_model()}; }, owners(204)},
      // accelerator_routes.cpp
      {"GET", "/api/v1/accelerators", "reader", fixed("/api/v1/accelerators"), readers(200)},
      // run_routes.cpp
      {"GET", "/api/v1/runs", "reader", fixed("/api/v1/runs"), readers(200)},
      {"POST", "/api/v1/plan", "reader",
       [](World& w) {
         return Call{"/api/v1/plan", Podium::run_spec(w.cluster, "planned")};
       },
       readers(200)},
      {"POST", "/api/v1/runs", "writer",
       [](World& w) {
         return Call{"/api/v1/runs", Podium::run_spec(w.cluster, unique_name("run"))};
       },
       writers(201)},
      {"GET", "/api/v1/runs/{id}", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id}; }, readers(200)},
      {"POST", "/api/v1/runs/{id}/cancel", "writer",
       [](World& w) { return Call{"/api/v1/runs/" + w.fresh_member_run(false) + "/cancel"}; },
       owners(200)},
      {"PATCH", "/api/v1/runs/{id}", "writer",
       [](World& w) {
         return Call{"/api/v1/runs/" + w.run_id, {{"notes", "matrix"}}};
       },
       owners(200)},
      {"DELETE", "/api/v1/runs/{id}", "writer",
       [](World& w) { return Call{"/api/v1/runs/" + w.fresh_member_run(true)}; }, owners(204)},
      {"GET", "/api/v1/runs/{id}/events", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/events"}; }, readers(200)},
      {"GET", "/api/v1/runs/{id}/checkpoints", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/checkpoints"}; }, readers(200)},
      // The world's cluster uses agents: no engine manifest (409) for anyone who may read.
      {"GET", "/api/v1/runs/{id}/manifest", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/manifest"}; }, readers(409)},
      // run_metrics_routes.cpp, compare_routes.cpp, import_routes.cpp
      {"GET", "/api/v1/runs/{id}/metrics", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/metrics"}; }, readers(200)},
      {"GET", "/api/v1/runs/{id}/summary", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/summary"}; }, readers(200)},
      {"GET", "/api/v1/compare", "reader",
       [](World& w) {
         return Call{"/api/v1/compare?runs=" + w.run_id + "," + w.fresh_member_run(false)};
       },
       readers(200)},
      {"POST", "/api/v1/compares", "writer",
       [](World& w) {
         return Call{"/api/v1/compares",
                     {{"name", "matrix"}, {"runs", {w.run_id, w.fresh_member_run(false)}}}};
       },
       writers(201)},
      {"GET", "/api/v1/compares", "reader", fixed("/api/v1/compares"), readers(200)},
      {"GET", "/api/v1/compares/{id}", "reader",
       [](World& w) { return Call{"/api/v1/compares/" + w.member_compare()}; }, readers(200)},
      {"DELETE", "/api/v1/compares/{id}", "writer",
       [](World& w) { return Call{"/api/v1/compares/" + w.member_compare()}; }, owners(204)},
      // project_routes.cpp
      {"GET", "/api/v1/projects", "reader", fixed("/api/v1/projects"), readers(200)},
      {"POST", "/api/v1/projects", "writer",
       [](World&) {
         return Call{"/api/v1/projects", {{"name", unique_name("prj")}}};
       },
       writers(201)},
      {"GET", "/api/v1/projects/{name}", "reader",
       [](World& w) { return Call{"/api/v1/projects/" + w.member_project()}; }, readers(200)},
      {"PATCH", "/api/v1/projects/{name}", "writer",
       [](World& w) {
         return Call{"/api/v1/projects/" + w.member_project(), {{"description", "changed"}}};
       },
       owners(200)},
      {"DELETE", "/api/v1/projects/{name}", "writer",
       [](World& w) { return Call{"/api/v1/projects/" + w.member_project()}; }, owners(204)},
      {"POST", "/api/v1/runs/import", "writer",
       [](World&) {
         return Call{"/api/v1/runs/import",
                     {{"name", unique_name("imported")},
                      {"accelerator", "v5p-8"},
                      {"model", "llama2-7b"},
                      {"log", "completed step: 0, seconds: 1.5, loss: 2.0\n"}}};
       },
       writers(201)},
      // attempt_routes.cpp, run_log_routes.cpp
      {"GET", "/api/v1/runs/{id}/attempts", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/attempts"}; }, readers(200)},
      {"GET", "/api/v1/runs/{id}/logs", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.run_id + "/logs"}; }, readers(200)},
      // A finished run: its stream sends what there is and ends.
      {"GET", "/api/v1/runs/{id}/logs/stream", "reader",
       [](World& w) { return Call{"/api/v1/runs/" + w.fresh_member_run(true) + "/logs/stream"}; },
       readers(200)},
      // bundle_routes.cpp
      {"PUT", "/api/v1/bundles/{digest}", "writer",
       [](World&) {
         auto [digest, bytes] = fresh_bundle();
         Call c{"/api/v1/bundles/" + digest};
         c.raw = bytes;
         return c;
       },
       writers(201)},
      {"GET", "/api/v1/bundles/{digest}", "reader",
       [](World& w) { return Call{"/api/v1/bundles/" + w.bundle}; }, readers(200)},
      {"GET", "/api/v1/bundles/{digest}/archive", "reader",
       [](World& w) { return Call{"/api/v1/bundles/" + w.bundle + "/archive"}; }, readers(200)},
      // agent_routes.cpp
      {"POST", "/api/v1/agent/register", "agent",
       [](World& w) {
         return Call{"/api/v1/agent/register",
                     {{"cluster", w.cluster}, {"slice", 0}, {"host", 0}, {"instance", "authz"}}};
       },
       agents(200)},
      {"POST", "/api/v1/agent/heartbeat", "agent",
       [](World& w) {
         w.agent_attempt();
         return Call{"/api/v1/agent/heartbeat", {{"worker_id", w.worker_id}}, true};
       },
       agents(200)},
      {"GET", "/api/v1/agent/assignment", "agent",
       [](World& w) {
         w.agent_attempt();
         return Call{"/api/v1/agent/assignment?worker_id=" + w.worker_id + "&wait=0", nullptr,
                     true};
       },
       agents(204)},
      {"POST", "/api/v1/agent/attempts/{id}/status", "agent",
       [](World& w) {
         return Call{"/api/v1/agent/attempts/" + w.agent_attempt() + "/status",
                     {{"rank", 0}, {"state", "running"}, {"pid", 4242}},
                     true};
       },
       agents(200)},
      {"POST", "/api/v1/agent/attempts/{id}/logs", "agent",
       [](World& w) {
         return Call{"/api/v1/agent/attempts/" + w.agent_attempt() + "/logs",
                     {{"rank", 0}, {"seq", 0}, {"lines", {"hello"}}},
                     true};
       },
       agents(200)},
      {"POST", "/api/v1/agent/attempts/{id}/checkpoints", "agent",
       [](World& w) {
         return Call{"/api/v1/agent/attempts/" + w.agent_attempt() + "/checkpoints",
                     {{"step", 10}, {"uri", "/tmp/podium-authz/10"}, {"bytes", 1}},
                     true};
       },
       agents(201)},
      // The world's run has no checkpoint at this step: past authorization, 404.
      {"POST", "/api/v1/agent/attempts/{id}/checkpoint-deletions", "agent",
       [](World& w) {
         return Call{"/api/v1/agent/attempts/" + w.agent_attempt() + "/checkpoint-deletions",
                     {{"step", 987654}, {"deleted", true}},
                     true};
       },
       agents(404)},
      // Only an attempt's attach token may join it: a cluster's worker token is refused.
      {"POST", "/api/v1/agent/attach", "agent",
       [](World&) {
         return Call{"/api/v1/agent/attach", {{"rank", 0}, {"slice", 0}, {"host", 0}}};
       },
       agents(403)},
      // After the agent rows (registering the slot again would replace the host credential).
      // The shared run has no bundle: the worker holds no rank that uses it (the allowed case
      // is in bundle_test.cpp).
      {"GET", "/api/v1/agent/bundles/{digest}", "agent",
       [](World& w) {
         w.agent_attempt();
         return Call{"/api/v1/agent/bundles/" + w.bundle, nullptr, true};
       },
       agents(403)},
      // webhook_routes.cpp: targets on loopback (allowed by this test's server), never called
      // successfully.
      {"GET", "/api/v1/webhooks", "reader", fixed("/api/v1/webhooks"), readers(200)},
      {"POST", "/api/v1/webhooks", "writer",
       fixed("/api/v1/webhooks",
             {{"url", "http://127.0.0.1:9/authz"}, {"events", json::array({"run.failed"})}}),
       writers(201)},
      {"DELETE", "/api/v1/webhooks/{id}", "writer",
       [](World& w) {
         auto h = require_status(
             w.member.api.post("/api/v1/webhooks", {{"url", "http://127.0.0.1:9/doomed"},
                                                    {"events", json::array({"run.failed"})}}),
             201);
         return Call{"/api/v1/webhooks/" + h.json["id"].get<std::string>()};
       },
       // Viewers may not write; another member's webhook does not exist for them.
       Expect{401, 401, 403, 204, 404, 204, 403}},
      {"GET", "/api/v1/webhooks/{id}/deliveries", "reader",
       [](World& w) {
         auto h = require_status(
             w.member.api.post("/api/v1/webhooks", {{"url", "http://127.0.0.1:9/log"},
                                                    {"events", json::array({"run.failed"})}}),
             201);
         return Call{"/api/v1/webhooks/" + h.json["id"].get<std::string>() + "/deliveries"};
       },
       own_token(200)},
  };
}

std::string status_text(int s) {
  return s == 0 ? "ERR" : std::to_string(s);
}

TEST(Authorization, EveryRouteForEveryKindOfCaller) {
  PODIUM_IT_REQUIRE_DATABASE();
  // The webhook rows subscribe a loopback URL, which only webhooks.allow_hosts permits.
  Podium podium({.settings = {"webhooks.allow_hosts=127.0.0.1"}});
  World world(podium);

  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"method", "route"};
  for (const char* w : kWhoNames) header.emplace_back(w);
  table.push_back(header);
  std::vector<std::string> mismatches;

  for (const Row& row : routes()) {
    std::vector<std::string> line = {row.method, row.pattern};
    for (int who = 0; who < kWhoCount; ++who) {
      Call call;
      try {
        call = row.prepare(world);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "preparing " << row.method << " " << row.pattern << " for "
                      << kWhoNames[who] << ": " << e.what();
        line.push_back("setup!");
        continue;
      }
      Api api(podium.url(), call.host_credential && who == kWorker
                                ? world.host_credential
                                : world.tokens[static_cast<size_t>(who)]);
      auto r = call.raw ? api.raw(row.method, call.path, *call.raw,
                                  {{"Content-Type", "application/gzip"}})
                        : api.call(row.method, call.path, call.body);
      const int want = row.expect[static_cast<size_t>(who)];
      std::string cell = status_text(r.status);
      bool bad = r.status != want;
      // Every refusal is a problem+json document.
      if (!bad && want >= 400 && !is_problem(r, want)) {
        bad = true;
        cell += "(not problem+json)";
      }
      if (bad) {
        cell += "!=" + std::to_string(want);
        const std::string d = r.describe();
        mismatches.push_back(std::string(kWhoNames[static_cast<size_t>(who)]) + ": " +
                             (d.size() > 400 ? d.substr(0, 400) + "..." : d));
      }
      line.push_back(cell);
    }
    table.push_back(line);
  }
  // The server survived all of it.
  EXPECT_EQ(podium.anonymous().get("/healthz").status, 200);
  if (!mismatches.empty()) {
    std::string detail;
    for (const auto& m : mismatches) detail += "  " + m + "\n";
    ADD_FAILURE() << mismatches.size() << " unexpected statuses (cells 'actual!=expected'):\n"
                  << format_table(table) << "\nreplies:\n"
                  << detail;
  }
}

TEST(Authorization, WorkerTokensOfAnotherClusterAndRevokedTokens) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  podium.create_cluster("wa", "cpu-1");
  auto r = require_status(podium.admin().post("/api/v1/clusters/wa/worker-tokens"), 201);
  const std::string id = r.json["id"], token = r.json["token"];
  auto worker = podium.as(token);
  EXPECT_TRUE(is_problem(worker.get("/api/v1/clusters"), 403));
  EXPECT_EQ(worker.get("/healthz").status, 200);
  require_status(podium.admin().del("/api/v1/clusters/wa/worker-tokens/" + id), 204);
  EXPECT_TRUE(is_problem(worker.get("/api/v1/clusters"), 401));
  // Deleting a cluster takes its worker tokens with it.
  auto live = podium.worker_token("wa");
  EXPECT_TRUE(is_problem(podium.as(live).get("/api/v1/clusters"), 403));
  require_status(podium.admin().del("/api/v1/clusters/wa"), 204);
  EXPECT_TRUE(is_problem(podium.as(live).get("/api/v1/clusters"), 401));

  // Malformed Authorization headers are refused, not ignored.
  auto anon = podium.anonymous();
  for (const std::string h :
       {"Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer ", "Token abc", "bearer"}) {
    SCOPED_TRACE(h);
    EXPECT_TRUE(
        is_problem(anon.call("GET", "/api/v1/clusters", nullptr, {{"Authorization", h}}), 401));
  }
  // A cookie that names no session is refused too.
  EXPECT_TRUE(is_problem(
      anon.call("GET", "/api/v1/clusters", nullptr, {{"Cookie", "podium_session=pds_nope"}}), 401));
  // Open routes ignore stale credentials.
  EXPECT_EQ(anon.call("GET", "/healthz", nullptr, {{"Authorization", "Bearer stale"}}).status, 200);
}

// Reads the registrations in backend/api/*.cpp: (method, pattern, access).
std::set<std::tuple<std::string, std::string, std::string>> registered_routes(std::string* error) {
  namespace fs = std::filesystem;
  std::set<std::tuple<std::string, std::string, std::string>> out;
  const fs::path dir = repo_root() / "backend" / "api";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = dir.string() + " is not a directory (set PODIUM_ROOT)";
    return out;
  }
  static const std::regex add(
      R"re(\.add\(\s*"([A-Z]+)"\s*,\s*"([^"]+)"\s*,\s*(?:http::)?Access::(\w+))re");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (std::sregex_iterator it(text.begin(), text.end(), add), end; it != end; ++it)
      out.emplace((*it)[1].str(), (*it)[2].str(), (*it)[3].str());
  }
  return out;
}

TEST(Authorization, TheMatrixCoversEveryRegisteredRoute) {
  std::string error;
  auto registered = registered_routes(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(registered.empty()) << "no router.add(...) found under backend/api";
  std::set<std::tuple<std::string, std::string, std::string>> tabled;
  for (const auto& r : routes()) tabled.emplace(r.method, r.pattern, r.access);
  std::string missing, stale;
  for (const auto& r : registered)
    if (!tabled.count(r))
      missing +=
          "  " + std::get<0>(r) + " " + std::get<1>(r) + " (Access::" + std::get<2>(r) + ")\n";
  for (const auto& r : tabled)
    if (!registered.count(r))
      stale += "  " + std::get<0>(r) + " " + std::get<1>(r) + " (Access::" + std::get<2>(r) + ")\n";
  EXPECT_TRUE(missing.empty()) << "registered in backend/api but not in the authorization matrix "
                                  "(tests/integration/api/authorization_test.cpp routes()):\n"
                               << missing;
  EXPECT_TRUE(stale.empty()) << "in the matrix but not registered with that access class:\n"
                             << stale;
}

}  // namespace
}  // namespace podium::it
