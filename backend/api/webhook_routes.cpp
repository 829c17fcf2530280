// Webhook subscriptions (issue 30 point 2): a signed-in member's webhooks hear of their own runs'
// events, an admin's of every run's. The secret is returned once, by the create; the delivery log
// shows every attempt. Delivery itself is backend/notify's (outbox rows come from a trigger on
// run_events, migrations/0021_webhooks.sql).
#include <set>

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"
#include "backend/notify/event_types.h"
#include "backend/notify/target_url.h"
#include "backend/notify/webhook_http.h"

namespace podium::api {

namespace {

// Enough for every team's channels; bounds what one account can make every event fan out to.
constexpr int kMaxWebhooksPerUser = 50;

std::string webhook_select() {
  return "SELECT w.id, w.seq, w.url, to_json(w.events)::text AS events, u.username AS owner, " +
         rfc3339("w.created_at") +
         " AS created_at FROM webhooks w JOIN users u ON u.id = w.owner_id ";
}

nlohmann::json webhook_json(const db::Result& r, size_t i) {
  return {{"id", r.at(i, "id")},
          {"url", r.at(i, "url")},
          {"events", nlohmann::json::parse(r.at(i, "events"))},
          {"owner", r.at(i, "owner")},
          {"created_at", r.at(i, "created_at")}};
}

notify::AllowList allow_list(const ApiContext& ctx) {
  return notify::AllowList(ctx.config.webhooks_allow_hosts);
}

// Field errors of the URL under the SSRF rules (scheme, metadata names, resolved addresses).
// The name is resolved only when everything else is valid: a lookup may take up to
// webhooks.connect_timeout_ms, which a request refused anyway need not wait for.
void check_url(const ApiContext& ctx, const std::string& url, http::ObjectReader& in) {
  std::string error;
  const auto target = notify::parse_target_url(url, &error);
  if (!target) {
    in.error("url", error);
    return;
  }
  const auto allow = allow_list(ctx);
  if (auto policy = notify::target_policy_error(*target, allow)) {
    in.error("url", *policy);
    return;
  }
  if (!in.errors().empty()) return;
  const auto resolved = notify::resolve_target(*target, allow, ctx.config.webhooks_connect_timeout);
  if (!resolved.error.empty()) in.error("url", resolved.error);
}

http::Response create_webhook(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto url = in.string("url", true, notify::kMaxUrlLength);
  auto events = in.string_array("events", true);
  in.reject_unknown_fields();
  in.finish();  // 400: missing fields, wrong types
  // 422 from here: well-formed, but not a target or an event Podium may use.
  http::ObjectReader checks(body);
  if (events->empty()) checks.error("events", "must name at least one event");
  std::set<std::string> seen;
  for (const auto& e : *events) {
    if (!notify::is_event_type(e)) {
      std::string known;
      for (auto k : notify::kEventTypes) known += (known.empty() ? "" : ", ") + std::string(k);
      checks.error("events", "unknown event '" + e + "'; one of " + known);
    } else if (!seen.insert(e).second) {
      checks.error("events", "names '" + e + "' twice");
    }
  }
  check_url(ctx, *url, checks);
  if (!checks.errors().empty())
    throw http::unprocessable("the webhook cannot be created", checks.errors());

  const std::string id = new_id("whk");
  const std::string secret = secrets::new_token("whsec_");
  const std::string owner = user_id(rc);
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    // Serializes one user's creates so the count below holds.
    tx.exec("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", {owner});
    auto count = tx.exec("SELECT count(*) AS n FROM webhooks WHERE owner_id = $1", {owner});
    if (count.int64(0, "n") >= kMaxWebhooksPerUser)
      throw http::conflict("an account may have at most " + std::to_string(kMaxWebhooksPerUser) +
                           " webhooks; delete one first");
    tx.exec(
        "INSERT INTO webhooks (id, owner_id, url, events, secret) VALUES ($1, $2, $3, "
        "ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), $5)",
        {id, owner, *url, nlohmann::json(*events).dump(), secret});
    // The audit row leaves the URL out: a Slack URL is itself a credential.
    audit(tx, rc, "create", "webhook", id, {{"events", *events}});
    return tx.exec(webhook_select() + "WHERE w.id = $1", {id});
  });
  auto out = webhook_json(r, 0);
  out["secret"] = secret;  // shown once
  return json_response(201, out);
}

http::Response list_webhooks(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  const bool admin = rc.principal->is_admin();
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            webhook_select() +
                "WHERE ($1::bigint IS NULL OR w.seq < $1) AND ($3::text IS NULL OR "
                "w.owner_id = $3) ORDER BY w.seq DESC LIMIT $2",
            {page.after_param(), page.limit_param(), admin ? db::Param() : db::Param(user_id(rc))});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(webhook_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

// The webhook's id when the caller may see it (owner or admin); 404 otherwise, so that other
// users' webhook ids are not confirmed.
std::string visible_webhook(db::Transaction& tx, const http::RequestContext& rc, bool lock) {
  auto r = tx.exec(
      std::string("SELECT id, owner_id FROM webhooks WHERE id = $1") + (lock ? " FOR UPDATE" : ""),
      {rc.param("id")});
  if (r.empty() || (!rc.principal->is_admin() && r.at(0, "owner_id") != user_id(rc)))
    throw http::not_found("no webhook " + rc.param("id"));
  return r.at(0, "id");
}

http::Response delete_webhook(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    const std::string id = visible_webhook(tx, rc, true);
    tx.exec("DELETE FROM webhooks WHERE id = $1", {id});  // its deliveries and log go with it
    audit(tx, rc, "delete", "webhook", id);
  });
  return http::Response::empty(204);
}

http::Response list_deliveries(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        const std::string id = visible_webhook(tx, rc, false);
        return tx.exec(
            "SELECT d.id, d.event_id, d.event_type, d.run_id, d.state, d.attempts, " +
                rfc3339("d.created_at") + " AS created_at, " + rfc3339("d.next_attempt_at") +
                " AS next_attempt_at, (SELECT coalesce(json_agg(json_build_object('at', " +
                rfc3339("a.at") +
                ", 'http_status', a.http_status, 'error', a.error, 'duration_ms', "
                "a.duration_ms, 'next_attempt_at', " +
                rfc3339("a.next_attempt_at") +
                ") ORDER BY a.id), '[]'::json)::text FROM webhook_attempts a WHERE a.delivery_id "
                "= d.id) AS attempt_log FROM webhook_deliveries d WHERE d.webhook_id = $1 AND "
                "($2::bigint IS NULL OR d.id < $2) ORDER BY d.id DESC LIMIT $3",
            {id, page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back({{"id", r.int64(i, "id")},
                     {"event_id", "evt_" + r.at(i, "event_id")},
                     {"type", r.at(i, "event_type")},
                     {"run_id", r.at(i, "run_id")},
                     {"state", r.at(i, "state")},
                     {"created_at", r.at(i, "created_at")},
                     {"next_attempt_at", nullable_string(r, i, "next_attempt_at")},
                     {"attempts", nlohmann::json::parse(r.at(i, "attempt_log"))}});
    seqs.push_back(r.int64(i, "id"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

}  // namespace

void register_webhook_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("POST", "/api/v1/webhooks", http::Access::writer, create_webhook);
  routes.add("GET", "/api/v1/webhooks", http::Access::reader, list_webhooks);
  routes.add("DELETE", "/api/v1/webhooks/{id}", http::Access::writer, delete_webhook);
  routes.add("GET", "/api/v1/webhooks/{id}/deliveries", http::Access::reader, list_deliveries);
}

}  // namespace podium::api
