// Clusters: slices of one accelerator type, their workers and worker tokens.
#include "engine/core/executors/executor.h"
#include "engine/core/executors/provisioning.h"
#include "engine/core/launch/launch_policy.h"
#include "engine/core/launch/maxtext_launch.h"
#include "engine/core/topology/accelerator.h"

#include "backend/api/accelerator_problem.h"
#include "backend/api/api_context.h"
#include "backend/api/checkpoint_lifecycle.h"
#include "backend/api/launch_policy_check.h"
#include "backend/api/resolve.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"

namespace podium::api {

namespace {

const std::vector<std::string> kCapacities = {"spot", "on-demand", "reservation", "flex"};

bool valid_cluster_name(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(s.front()))) return false;
  for (char c : s)
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

struct GcpFields {
  std::optional<std::string> project, reservation, network;
};

// project, reservation, network: "" clears a field; a value must be what GCP accepts, so the
// provisioning commands never carry something gcloud would refuse (or a shell would run).
GcpFields read_gcp_fields(http::ObjectReader& in) {
  GcpFields f;
  f.project = in.string("project", false, 30);
  f.reservation = in.string("reservation", false, 200);
  f.network = in.string("network", false, 63);
  if (f.project && !f.project->empty())
    if (auto why = core::check_gcp_project(*f.project)) in.error("project", *why);
  if (f.reservation && !f.reservation->empty())
    if (auto why = core::check_gcp_reservation(*f.reservation)) in.error("reservation", *why);
  if (f.network && !f.network->empty())
    if (auto why = core::check_gcp_resource_name(*f.network)) in.error("network", *why);
  return f;
}

// The launch_policy field, validated (engine/core/launch/launch_policy.h) and normalized with its
// defaults filled in; nullopt when absent. An invalid policy is a 422 naming every field at fault.
std::optional<std::string> read_launch_policy(const std::optional<nlohmann::json>& value) {
  if (!value) return std::nullopt;
  auto parsed = core::parse_launch_policy(*value);
  if (!parsed.value)
    throw http::unprocessable("invalid launch_policy: " + parsed.errors.front().field + " " +
                                  parsed.errors.front().message,
                              parsed.errors);
  return core::to_json(*parsed.value).dump();
}

std::string cluster_select(const std::string& heartbeat_seconds_param) {
  return "SELECT c.id, c.seq, c.name, c.accelerator, c.num_slices, c.capacity, c.zone, "
         "c.project, c.reservation, c.network, "
         "c.price_per_chip_hour, "
         "c.labels::text AS labels, c.executor::text AS executor, "
         "c.launch_policy::text AS launch_policy, c.maxtext_version, "
         "c.checkpoint_retention::text AS checkpoint_retention, " +
         rfc3339("c.created_at") + " AS created_at, " + rfc3339("c.updated_at") +
         " AS updated_at, "
         "(SELECT count(*) FROM workers w WHERE w.cluster_id = c.id) AS registered, "
         "(SELECT count(*) FROM workers w WHERE w.cluster_id = c.id AND w.last_heartbeat_at > "
         "now() - make_interval(secs => " +
         heartbeat_seconds_param + ")) AS healthy FROM clusters c ";
}

nlohmann::json cluster_json(const db::Result& r, size_t i) {
  nlohmann::json j = {
      {"id", r.at(i, "id")},
      {"name", r.at(i, "name")},
      {"num_slices", r.int64(i, "num_slices")},
      {"capacity", r.at(i, "capacity")},
      {"zone", r.at(i, "zone")},
      {"project", r.at(i, "project")},
      {"reservation", r.at(i, "reservation")},
      {"network", r.at(i, "network")},
      {"price_per_chip_hour", nullable_double(r, i, "price_per_chip_hour")},
      {"labels", json_column(r, i, "labels").value_or(nlohmann::json::object())},
      {"executor", json_column(r, i, "executor").value_or(nlohmann::json{{"kind", "agent"}})},
      {"launch_policy", launch_policy_json(r.at(i, "launch_policy"))},
      {"maxtext_version", r.at(i, "maxtext_version")},
      {"checkpoint_retention", json_column(r, i, "checkpoint_retention").value_or(nullptr)},
      {"created_at", r.at(i, "created_at")},
      {"updated_at", r.at(i, "updated_at")}};
  auto parsed = core::parse_accelerator(r.at(i, "accelerator"));
  int64_t expected = 0;
  if (parsed.value) {
    j["accelerator"] = core::to_json(*parsed.value);
    expected = static_cast<int64_t>(parsed.value->hosts_per_slice) * r.int64(i, "num_slices");
  } else {
    j["accelerator"] = {{"type", r.at(i, "accelerator")}};
  }
  j["hosts"] = {{"expected", expected},
                {"registered", r.int64(i, "registered")},
                {"healthy", r.int64(i, "healthy")}};
  return j;
}

// The executor field, validated (engine/core/executors/executor.h); nullopt when absent. An invalid
// executor is a 422 naming every field at fault (call after the reader's own checks passed).
std::optional<std::string> read_executor(const std::optional<nlohmann::json>& value) {
  if (!value) return std::nullopt;
  if (value->is_null()) return std::string(R"({"kind":"agent"})");
  auto parsed = core::parse_executor(*value);
  if (!parsed.value)
    throw http::unprocessable(
        "invalid executor: " + parsed.errors.front().field + " " + parsed.errors.front().message,
        parsed.errors);
  return core::to_json(*parsed.value).dump();
}

// maxtext_version: "auto", "fork", "legacy", a release or a commit
// (engine/core/launch/maxtext_launch.h).
std::optional<std::string> read_maxtext_version(http::ObjectReader& in) {
  auto v = in.string("maxtext_version", false, 64);
  if (v)
    if (auto why = core::maxtext_version_problem(*v)) in.error("maxtext_version", *why);
  return v;
}

std::string heartbeat_param(const ApiContext& ctx) {
  return std::to_string(ctx.config.heartbeat_deadline.count());
}

nlohmann::json load_cluster(ApiContext& ctx, db::Transaction& tx, const std::string& key) {
  auto id = find_cluster_id(tx, key);
  if (!id) throw http::not_found("no cluster " + key);
  auto r = tx.exec(cluster_select("$2") + "WHERE c.id = $1", {*id, heartbeat_param(ctx)});
  return cluster_json(r, 0);
}

http::Response list_clusters(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(cluster_select("$3") +
                           "WHERE ($1::bigint IS NULL OR c.seq < $1) ORDER BY c.seq DESC LIMIT $2",
                       {page.after_param(), page.limit_param(), heartbeat_param(ctx)});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(cluster_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response create_cluster(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", true, 63);
  auto accelerator = in.string("accelerator", true, 64);
  auto num_slices = in.integer("num_slices", false, 1, 4096);
  auto capacity = in.choice("capacity", false, kCapacities);
  auto zone = in.string("zone", false, 128);
  const auto gcp = read_gcp_fields(in);
  auto price = in.number("price_per_chip_hour", false, 0, 1e6);
  auto labels = in.object("labels", false, true);
  auto executor_json = in.any("executor");
  auto launch_policy_json = in.any("launch_policy");
  auto maxtext_version = read_maxtext_version(in);
  const auto checkpoint_retention = read_cluster_retention(in);
  if (name && !valid_cluster_name(*name))
    in.error("name",
             "use lower-case letters, digits, '-', '_' and '.', starting with a letter or digit");
  in.reject_unknown_fields();
  in.finish();
  auto parsed = core::parse_accelerator(*accelerator);
  if (!parsed.value) throw accelerator_problem(parsed);
  const auto executor = read_executor(executor_json);
  const auto launch_policy = read_launch_policy(launch_policy_json);
  const std::string id = new_id("clu");
  auto out = ctx.db.transact([&](db::Transaction& tx) {
    if (!tx.exec("SELECT 1 FROM clusters WHERE name = $1", {*name}).empty())
      throw http::conflict("a cluster named '" + *name + "' exists");
    tx.exec(
        "INSERT INTO clusters (id, name, accelerator, num_slices, capacity, zone, "
        "price_per_chip_hour, labels, "
        "created_by, executor, project, reservation, network, launch_policy, maxtext_version) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, COALESCE($10::jsonb, "
        "'{\"kind\":\"agent\"}'::jsonb), $11, $12, $13, COALESCE($14::jsonb, '{}'::jsonb), $15)",
        {id, *name, parsed.value->type, std::to_string(num_slices.value_or(1)),
         capacity.value_or("on-demand"), zone.value_or(""),
         price ? db::Param(std::to_string(*price)) : db::Param(),
         labels.value_or(nlohmann::json::object()).dump(), user_id(rc), executor,
         gcp.project.value_or(""), gcp.reservation.value_or(""), gcp.network.value_or(""),
         launch_policy, maxtext_version.value_or("auto")});
    if (checkpoint_retention) store_cluster_retention(tx, id, *checkpoint_retention);
    audit(tx, rc, "create", "cluster", id, {{"name", *name}, {"accelerator", parsed.value->type}});
    return load_cluster(ctx, tx, id);
  });
  return json_response(201, out);
}

http::Response get_cluster(ApiContext& ctx, http::RequestContext& rc) {
  auto out =
      ctx.db.transact([&](db::Transaction& tx) { return load_cluster(ctx, tx, rc.param("id")); },
                      db::TxMode::read_only);
  return json_response(200, out);
}

http::Response update_cluster(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto num_slices = in.integer("num_slices", false, 1, 4096);
  auto capacity = in.choice("capacity", false, kCapacities);
  auto zone = in.string("zone", false, 128);
  const auto gcp = read_gcp_fields(in);
  auto price = in.number("price_per_chip_hour", false, 0, 1e6);
  const bool clear_price = in.is_null("price_per_chip_hour");
  auto labels = in.object("labels", false, true);
  auto executor_json = in.any("executor");
  auto launch_policy_json = in.any("launch_policy");
  auto maxtext_version = read_maxtext_version(in);
  const auto checkpoint_retention = read_cluster_retention(in);
  for (const char* fixed : {"name", "accelerator", "id"})
    if (in.present(fixed)) {
      in.any(fixed);
      in.error(fixed, "cannot be changed; create a new cluster");
    }
  in.reject_unknown_fields();
  in.finish();
  const auto executor = read_executor(executor_json);
  const auto launch_policy = read_launch_policy(launch_policy_json);
  auto out = ctx.db.transact([&](db::Transaction& tx) {
    auto id = find_cluster_id(tx, rc.param("id"));
    if (!id) throw http::not_found("no cluster " + rc.param("id"));
    // Nothing to change: no write, no audit entry, updated_at stays when it was.
    if (body.empty()) return load_cluster(ctx, tx, *id);
    tx.exec(
        "UPDATE clusters SET num_slices = coalesce($2::integer, num_slices), capacity = "
        "coalesce($3, capacity), "
        "zone = coalesce($4, zone), price_per_chip_hour = CASE WHEN $6::boolean THEN NULL "
        "ELSE "
        "coalesce($5::double precision, price_per_chip_hour) END, labels = "
        "coalesce($7::jsonb, labels), executor = coalesce($8::jsonb, executor), "
        "project = coalesce($9, project), reservation = coalesce($10, reservation), "
        "network = coalesce($11, network), "
        "launch_policy = coalesce($12::jsonb, launch_policy), "
        "maxtext_version = coalesce($13, maxtext_version), updated_at = now() "
        "WHERE id = $1",
        {*id, num_slices ? db::Param(std::to_string(*num_slices)) : db::Param(), capacity, zone,
         price ? db::Param(std::to_string(*price)) : db::Param(), clear_price ? "true" : "false",
         labels ? db::Param(labels->dump()) : db::Param(), executor, gcp.project, gcp.reservation,
         gcp.network, launch_policy, maxtext_version});
    if (checkpoint_retention) store_cluster_retention(tx, *id, *checkpoint_retention);
    audit(tx, rc, "update", "cluster", *id, body);
    return load_cluster(ctx, tx, *id);
  });
  return json_response(200, out);
}

http::Response delete_cluster(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    auto id = find_cluster_id(tx, rc.param("id"));
    if (!id) throw http::not_found("no cluster " + rc.param("id"));
    auto runs = tx.exec("SELECT count(*) AS n FROM runs WHERE cluster_id = $1", {*id});
    if (runs.int64(0, "n") > 0)
      throw http::conflict("the cluster has " + runs.at(0, "n") +
                           " runs in its history; delete them first");
    tx.exec("DELETE FROM clusters WHERE id = $1", {*id});
    audit(tx, rc, "delete", "cluster", *id);
  });
  forget_credentials(ctx);  // its hosts' credentials went with it
  return http::Response::empty(204);
}

http::Response list_workers(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        auto id = find_cluster_id(tx, rc.param("id"));
        if (!id) throw http::not_found("no cluster " + rc.param("id"));
        return tx.exec(
            "SELECT id, slice, host, hostname, address, devices, version, "
            "software::text AS software, " +
                rfc3339("registered_at") + " AS registered_at, " + rfc3339("last_heartbeat_at") +
                " AS last_heartbeat_at, last_heartbeat_at > now() - "
                "make_interval(secs => $2) AS healthy, notice, " +
                rfc3339("notice_at") +
                " AS notice_at FROM workers WHERE cluster_id = $1 ORDER BY slice, "
                "host",
            {*id, heartbeat_param(ctx)});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  for (size_t i = 0; i < r.size(); ++i)
    items.push_back({{"id", r.at(i, "id")},
                     {"slice", r.int64(i, "slice")},
                     {"host", r.int64(i, "host")},
                     {"hostname", r.at(i, "hostname")},
                     {"address", r.at(i, "address")},
                     {"devices", r.int64(i, "devices")},
                     {"version", r.at(i, "version")},
                     {"software", json_column(r, i, "software").value_or(nlohmann::json(nullptr))},
                     {"registered_at", r.at(i, "registered_at")},
                     {"last_heartbeat_at", r.at(i, "last_heartbeat_at")},
                     {"healthy", r.boolean(i, "healthy")},
                     {"notice", r.opt(i, "notice") ? nlohmann::json(r.at(i, "notice"))
                                                   : nlohmann::json(nullptr)},
                     {"notice_at", r.opt(i, "notice_at") ? nlohmann::json(r.at(i, "notice_at"))
                                                         : nlohmann::json(nullptr)}});
  return json_response(200, {{"items", items}, {"next_cursor", nullptr}});
}

// The cluster's worker tokens, revoked ones included, newest first (paged like /tokens): which
// are live, who made them, when a host last registered with each. Never the token itself.
http::Response list_worker_tokens(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        auto id = find_cluster_id(tx, rc.param("id"));
        if (!id) throw http::not_found("no cluster " + rc.param("id"));
        return tx.exec(
            "SELECT t.id, t.seq, t.cluster_id, u.username AS created_by, " +
                rfc3339("t.created_at") + " AS created_at, " + rfc3339("t.last_used_at") +
                " AS last_used_at, " + rfc3339("t.revoked_at") +
                " AS revoked_at FROM worker_tokens t LEFT JOIN users u ON u.id = "
                "t.created_by WHERE t.cluster_id = $1 AND ($2::bigint IS NULL OR t.seq < "
                "$2) ORDER BY t.seq DESC LIMIT $3",
            {*id, page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back({{"id", r.at(i, "id")},
                     {"cluster_id", r.at(i, "cluster_id")},
                     {"created_by", nullable_string(r, i, "created_by")},
                     {"created_at", r.at(i, "created_at")},
                     {"last_used_at", nullable_string(r, i, "last_used_at")},
                     {"revoked_at", nullable_string(r, i, "revoked_at")}});
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response create_worker_token(ApiContext& ctx, http::RequestContext& rc) {
  const std::string token = secrets::new_token("pdw_");
  const std::string token_id = new_id("wtk");
  std::string cluster_id;
  ctx.db.transact([&](db::Transaction& tx) {
    auto id = find_cluster_id(tx, rc.param("id"));
    if (!id) throw http::not_found("no cluster " + rc.param("id"));
    cluster_id = *id;
    tx.exec(
        "INSERT INTO worker_tokens (id, cluster_id, token_hash, created_by) VALUES ($1, $2, "
        "$3, $4)",
        {token_id, *id, secrets::token_hash(token), user_id(rc)});
    audit(tx, rc, "create", "worker_token", token_id, {{"cluster_id", *id}});
  });
  return json_response(201, {{"id", token_id}, {"cluster_id", cluster_id}, {"token", token}});
}

http::Response revoke_worker_token(ApiContext& ctx, http::RequestContext& rc) {
  auto n = ctx.db.transact([&](db::Transaction& tx) {
    auto id = find_cluster_id(tx, rc.param("id"));
    if (!id) throw http::not_found("no cluster " + rc.param("id"));
    auto r = tx.exec(
        "UPDATE worker_tokens SET revoked_at = coalesce(revoked_at, now()) "
        "WHERE id = $1 AND cluster_id = $2 RETURNING id",
        {rc.param("token_id"), *id});
    if (!r.empty()) audit(tx, rc, "revoke", "worker_token", rc.param("token_id"));
    return r.size();
  });
  if (n == 0) throw http::not_found("no worker token " + rc.param("token_id"));
  return http::Response::empty(204);
}

http::Response get_provisioning(ApiContext& ctx, http::RequestContext& rc) {
  auto cluster =
      ctx.db.transact([&](db::Transaction& tx) { return load_cluster(ctx, tx, rc.param("id")); },
                      db::TxMode::read_only);
  auto parsed = core::parse_accelerator(cluster["accelerator"]["type"].get<std::string>());
  if (!parsed.value)
    throw http::unprocessable("the cluster's accelerator is no longer in the catalog");
  core::ProvisioningRequest req;
  req.cluster = cluster["name"].get<std::string>();
  req.accelerator = *parsed.value;
  req.num_slices = cluster["num_slices"].get<int>();
  req.capacity = cluster["capacity"].get<std::string>();
  req.zone = cluster["zone"].get<std::string>();
  req.project = cluster["project"].get<std::string>();
  req.reservation = cluster["reservation"].get<std::string>();
  req.network = cluster["network"].get<std::string>();
  req.server_url = ctx.config.public_url;
  if (cluster["executor"].is_object() && cluster["executor"].value("kind", "") == "agent")
    req.image = cluster["executor"].value("image", "");
  return json_response(200, core::to_json(core::provisioning_commands(req)));
}

}  // namespace

void register_cluster_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/clusters", http::Access::reader, list_clusters);
  routes.add("POST", "/api/v1/clusters", http::Access::admin, create_cluster);
  routes.add("GET", "/api/v1/clusters/{id}", http::Access::reader, get_cluster);
  routes.add("PATCH", "/api/v1/clusters/{id}", http::Access::admin, update_cluster);
  routes.add("DELETE", "/api/v1/clusters/{id}", http::Access::admin, delete_cluster);
  routes.add("GET", "/api/v1/clusters/{id}/workers", http::Access::reader, list_workers);
  routes.add("GET", "/api/v1/clusters/{id}/worker-tokens", http::Access::admin, list_worker_tokens);
  routes.add("POST", "/api/v1/clusters/{id}/worker-tokens", http::Access::admin,
             create_worker_token);
  routes.add("DELETE", "/api/v1/clusters/{id}/worker-tokens/{token_id}", http::Access::admin,
             revoke_worker_token);
  routes.add("GET", "/api/v1/clusters/{id}/provisioning", http::Access::reader, get_provisioning);
}

}  // namespace podium::api
