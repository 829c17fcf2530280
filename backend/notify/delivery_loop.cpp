#include "backend/notify/delivery_loop.h"

#include <random>

#include <nlohmann/json.hpp>

#include "backend/notify/event_body.h"
#include "backend/notify/signature.h"
#include "backend/notify/target_url.h"

namespace podium::notify {

namespace {

using SysClock = std::chrono::system_clock;
using nlohmann::json;

const std::string kUtc = "to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

std::string utc(const std::string& column) {
  std::string s = kUtc;
  s.replace(s.find("%s"), 2, column);
  return s;
}

// The timestamptz of parameter $n given as microseconds since the epoch (exact: no floating
// point on the way, so what a test's injected clock says is what is stored).
std::string at_micros(int n) {
  return "('epoch'::timestamptz + $" + std::to_string(n) + "::bigint * interval '1 microsecond')";
}

std::string micros_param(SysClock::time_point t) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

SysClock::time_point from_micros(std::int64_t us) {
  return SysClock::time_point(
      std::chrono::duration_cast<SysClock::duration>(std::chrono::microseconds(us)));
}

// The body of a delivery's first attempt, from the event and the run as they are now (a run
// deleted since still gets its id and the event's facts).
std::string compose_body(db::Transaction& tx, std::int64_t delivery_id,
                         const DeliverySettings& settings) {
  static const std::string sql =
      "SELECT d.event_id, d.event_type, d.run_id, " + utc("d.created_at") +
      " AS created_at, e.cause, e.detail::text AS detail, e.to_state, r.name, r.state, "
      "r.failure_class, r.last_step, to_json(r.tags)::text AS tags, r.spec->>'project' AS project, "
      "u.username AS owner, c.name AS cluster FROM webhook_deliveries d "
      "LEFT JOIN run_events e ON e.id = d.event_id LEFT JOIN runs r ON r.id = d.run_id "
      "LEFT JOIN users u ON u.id = r.owner_id LEFT JOIN clusters c ON c.id = r.cluster_id "
      "WHERE d.id = $1";
  auto r = tx.exec(sql, {std::to_string(delivery_id)});
  EventFacts f;
  f.event_id = "evt_" + r.at(0, "event_id");
  f.type = r.at(0, "event_type");
  f.created_at = r.at(0, "created_at");
  f.cause = r.at(0, "cause");
  f.detail =
      r.is_null(0, "detail") ? json(nullptr) : json::parse(r.at(0, "detail"), nullptr, false);
  const std::string run_id = r.at(0, "run_id");
  const auto text_or_null = [&](const char* col) {
    return r.is_null(0, col) ? json(nullptr) : json(r.at(0, col));
  };
  f.run = {{"id", run_id},
           {"name", text_or_null("name")},
           // The state the event left the run in (the run may have moved on since).
           {"state", r.is_null(0, "to_state") ? text_or_null("state") : json(r.at(0, "to_state"))},
           {"owner", text_or_null("owner")},
           {"cluster", text_or_null("cluster")},
           {"project", text_or_null("project")},
           {"failure_class", text_or_null("failure_class")},
           {"last_step", r.is_null(0, "last_step") ? json(nullptr) : json(r.int64(0, "last_step"))},
           {"tags",
            r.is_null(0, "tags") ? json::array() : json::parse(r.at(0, "tags"), nullptr, false)}};
  if (!settings.public_url.empty()) {
    f.run_url = settings.public_url + "/runs/" + run_id;
    f.run["url"] = f.run_url;
  }
  return event_body(f).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

DeliverySettings delivery_settings(const ServerConfig& config, std::string dashboard_url) {
  DeliverySettings s;
  s.retry.first_delay = config.webhooks_retry_first_delay;
  s.retry.max_delay = config.webhooks_retry_max_delay;
  s.retry.give_up_after = config.webhooks_give_up_after;
  s.allow = AllowList(config.webhooks_allow_hosts);
  s.http.connect_timeout = config.webhooks_connect_timeout;
  s.http.total_timeout = config.webhooks_timeout;
  s.http.max_response_bytes = config.webhooks_max_response_bytes;
  s.http.ca_file = config.webhooks_ca_file;
  while (!dashboard_url.empty() && dashboard_url.back() == '/') dashboard_url.pop_back();
  s.public_url = std::move(dashboard_url);
  return s;
}

DeliveryPass deliver_one(db::Database& db, const DeliverySettings& settings, const WallClock& now,
                         const JitterDraw& draw) {
  auto tx = db.begin();
  const auto started = now();
  // The oldest due delivery that no other replica is working on.
  static const std::string take =
      "SELECT d.id, d.event_id, d.attempts, d.body, (extract(epoch FROM d.created_at) * "
      "1000000)::bigint AS created_us, w.url, w.secret FROM webhook_deliveries d JOIN webhooks w "
      "ON w.id = d.webhook_id WHERE d.state = 'pending' AND d.next_attempt_at <= " +
      at_micros(1) + " ORDER BY d.next_attempt_at, d.id LIMIT 1 FOR UPDATE OF d SKIP LOCKED";
  auto due = tx.exec(take, {micros_param(started)});
  if (due.empty()) return DeliveryPass::idle;
  const std::int64_t id = due.int64(0, "id");
  const int failed_before = static_cast<int>(due.int64(0, "attempts"));
  const std::string body =
      due.is_null(0, "body") ? compose_body(tx, id, settings) : due.at(0, "body");

  // The URL was checked at creation; the rules or the name's addresses may have changed since.
  PostResult result;
  std::string error;
  const auto target = parse_target_url(due.at(0, "url"), &error);
  if (!target) {
    result.error = "the URL " + error;
  } else if (auto policy = target_policy_error(*target, settings.allow)) {
    result.error = "the URL " + *policy;
  } else {
    const auto t =
        std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
    result = post_webhook(*target, settings.allow,
                          {{"Podium-Signature", signature_header(due.at(0, "secret"), t, body)},
                           {"Podium-Event-Id", "evt_" + due.at(0, "event_id")}},
                          body, settings.http);
  }
  const auto finished = now();
  const auto duration_ms = std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(finished - started).count());

  DeliveryPass pass = DeliveryPass::delivered;
  std::optional<SysClock::time_point> next;
  if (!result.delivered()) {
    next = next_attempt_time(settings.retry, from_micros(due.int64(0, "created_us")), finished,
                             failed_before + 1, draw());
    pass = next ? DeliveryPass::retry_scheduled : DeliveryPass::given_up;
  }
  const db::Param next_param = next ? db::Param(micros_param(*next)) : db::Param();
  static const std::string update =
      "UPDATE webhook_deliveries SET attempts = attempts + 1, body = $2, state = $3, "
      "next_attempt_at = " +
      at_micros(4) + " WHERE id = $1";
  tx.exec(update, {std::to_string(id), body,
                   pass == DeliveryPass::delivered  ? "delivered"
                   : pass == DeliveryPass::given_up ? "given_up"
                                                    : "pending",
                   next_param});
  static const std::string record =
      "INSERT INTO webhook_attempts (delivery_id, at, http_status, error, duration_ms, "
      "next_attempt_at) VALUES ($1, " +
      at_micros(2) + ", $3::int, $4, $5::int, " + at_micros(6) + ")";
  tx.exec(record, {std::to_string(id), micros_param(started),
                   result.status ? db::Param(std::to_string(result.status)) : db::Param(),
                   result.error.empty() ? db::Param() : db::Param(result.error.substr(0, 1000)),
                   std::to_string(duration_ms), next_param});
  tx.commit();
  return pass;
}

DeliveryLoop::DeliveryLoop(db::Database& db, DeliverySettings settings, int threads,
                           std::chrono::milliseconds poll, std::shared_ptr<spdlog::logger> log)
    : db_(db), settings_(std::move(settings)), log_(std::move(log)) {
  for (int i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<PeriodicTask>(
        poll,
        [this, rng = std::make_shared<std::mt19937_64>(std::random_device{}())] {
          std::uniform_real_distribution<double> uniform(0.0, 1.0);
          const WallClock clock = [] { return SysClock::now(); };
          const JitterDraw draw = [&] { return uniform(*rng); };
          while (true) {
            const DeliveryPass pass = deliver_one(db_, settings_, clock, draw);
            if (pass == DeliveryPass::idle) break;
            if (pass == DeliveryPass::given_up)
              log_->warn(json{{"msg", "webhook delivery given up"}}.dump());
          }
        },
        [log = log_](const std::exception& e) {
          log->warn(json{{"msg", "webhook delivery pass failed"}, {"error", e.what()}}.dump(
              -1, ' ', false, json::error_handler_t::replace));
        }));
  }
}

DeliveryLoop::~DeliveryLoop() {
  stop();
}

void DeliveryLoop::start() {
  for (auto& w : workers_) w->start();
}

void DeliveryLoop::stop() {
  for (auto& w : workers_) w->stop();
}

void DeliveryLoop::wake() {
  for (auto& w : workers_) w->wake();
}

}  // namespace podium::notify
