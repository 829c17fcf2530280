#include "backend/api/app.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <string_view>

#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"
#include "backend/common/static_files.h"
#include "engine/core/text/json_text.h"

namespace podium::api {

namespace {

bool acceptable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

}  // namespace

http::Response from_db_error(ApiContext& ctx, const db::DbError& e, const std::string& request_id) {
  using K = db::DbError::Kind;
  switch (e.kind()) {
    case K::unavailable:
    case K::timeout:
    case K::retryable: {
      auto r = http::unavailable("the database is unavailable; retry shortly").to_response();
      r.set_header("Retry-After", "1");
      return r;
    }
    case K::unique_violation:
      return http::conflict("a resource with the same unique value already exists").to_response();
    case K::foreign_key:
      return http::conflict("the resource is referenced by or refers to another resource")
          .to_response();
    case K::check_violation:
      return http::unprocessable("a value is outside what the database accepts").to_response();
    case K::other:
      break;
  }
  ctx.log->error(nlohmann::json{
      {"msg", "database error"},
      {"request_id", request_id},
      {"sqlstate", e.sqlstate()},
      {"error",
       e.what()}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return http::Problem{
      500, "", "internal error (request " + request_id + ")", {}, nlohmann::json::object()}
      .to_response();
}

App::App(ApiContext& ctx) : ctx_(ctx) {
  register_health_routes(router_, ctx_);
  register_auth_routes(router_, ctx_);
  register_user_routes(router_, ctx_);
  register_cluster_routes(router_, ctx_);
  register_dataset_routes(router_, ctx_);
  register_model_routes(router_, ctx_);
  register_accelerator_routes(router_, ctx_);
  register_run_routes(router_, ctx_);
  register_agent_routes(router_, ctx_);
  register_run_log_routes(router_, ctx_);
  register_attempt_routes(router_, ctx_);
  register_run_metrics_routes(router_, ctx_);
  register_compare_routes(router_, ctx_);
  register_project_routes(router_, ctx_);
  register_bundle_routes(router_, ctx_);
  register_import_routes(router_, ctx_);
  register_webhook_routes(router_, ctx_);
  static_files_ = std::make_unique<http::StaticFiles>(ctx_.config.web_root);
}

App::~App() = default;

http::Response App::dispatch(http::Request& req, std::string& route_label,
                             std::string& user_label) {
  auto raw_path = std::string_view(req.target).substr(0, req.target.find('?'));
  auto m = router_.match(req.method, raw_path);
  if (m.bad_encoding) throw http::bad_request("a path parameter has a malformed %-escape");
  // Text reaches PostgreSQL, which refuses invalid UTF-8: reject it here as malformed input.
  for (const auto& [name, value] : m.params)
    if (!http::valid_utf8(value))
      throw http::bad_request("path parameter '" + name + "' is not valid UTF-8");
  for (const auto& [name, value] : req.query)
    if (!http::valid_utf8(name) || !http::valid_utf8(value))
      throw http::bad_request("query parameter '" + name + "' is not valid UTF-8");
  if (!m.route) {
    if (!m.allowed_methods.empty()) {
      std::string allow;
      for (const auto& a : m.allowed_methods) allow += (allow.empty() ? "" : ", ") + a;
      auto r = http::Problem{405,
                             "",
                             req.method + " is not allowed here; allowed: " + allow,
                             {},
                             nlohmann::json::object()}
                   .to_response();
      r.set_header("Allow", allow);
      route_label = "(method not allowed)";
      return r;
    }
    if (auto file = static_files_->serve(req)) {
      route_label = "(static)";
      return std::move(*file);
    }
    route_label = "(unknown)";
    throw http::not_found("no such endpoint: " + req.method + " " + req.path);
  }
  route_label = m.route->pattern;
  // The liveness lane (heartbeats: their own handler threads) may also take the database
  // connections reserved for it, authentication included: liveness never waits behind other work.
  std::optional<db::PriorityScope> liveness;
  if (m.route->traits.lane == http::Lane::liveness) liveness.emplace();
  http::RequestContext rc{req, std::move(m.params), std::nullopt, m.route->pattern};
  if (m.route->access != http::Access::open || req.header("authorization") ||
      req.header("cookie")) {
    // Open routes ignore bad credentials (login must work with a stale cookie).
    try {
      rc.principal = authenticate(ctx_, req);
    } catch (const http::Problem&) {
      if (m.route->access != http::Access::open) throw;
    }
  }
  if (rc.principal) user_label = rc.principal->display();
  authorize(m.route->access, rc.principal);
  return m.route->handler(rc);
}

// What the access log and the request metrics say of one request.
struct App::RequestRecord {
  std::string request_id;
  std::string method;
  std::string route;
  std::string path;
  std::string user;
  std::string remote;
  std::chrono::steady_clock::time_point started;
};

namespace {

// Records a RecordedOnAnswer's answer when it comes.
class Recorder final : public http::Deferred {
 public:
  Recorder(const App& app, std::shared_ptr<http::Deferred> inner, App::RequestRecord r)
      : app_(app), inner_(std::move(inner)), record_(std::move(r)) {}
  http::Wait wait() override { return inner_->wait(); }
  std::optional<http::Response> resume(bool timed_out) override {
    auto res = inner_->resume(timed_out);
    if (res) {
      res->set_header("X-Request-Id", record_.request_id);
      app_.record(record_, *res);
    }
    return res;
  }

 private:
  const App& app_;
  std::shared_ptr<http::Deferred> inner_;
  App::RequestRecord record_;
};

}  // namespace

void App::record(const RequestRecord& r, const http::Response& res) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - r.started).count();
  ctx_.metrics.observe_request(r.method, r.route, res.status, seconds);
  // One JSON line per request. Never the Authorization header, cookies or the query string.
  // Not even built when the level leaves it out (log.level=warn). Written field by field into
  // one buffer, not through a json object: at 16,000 requests a second the object's nodes and
  // its dump were a measurable part of a small response's cost.
  spdlog::logger& access = ctx_.access_log ? *ctx_.access_log : *ctx_.log;
  if (!access.should_log(spdlog::level::info)) return;
  std::string line;
  line.reserve(256 + r.path.size());
  auto field = [&line](const char* name, std::string_view value) {
    line += line.empty() ? "{\"" : ",\"";
    line += name;
    line += "\":";
    core::append_json_string(line, value);
  };
  auto number = [&line](const char* name, auto value) {
    char digits[32];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    line += ",\"";
    line += name;
    line += "\":";
    line.append(digits, end);
  };
  field("msg", "request");
  field("request_id", r.request_id);
  field("method", r.method);
  field("route", r.route);
  field("path", r.path);
  number("status", res.status);
  number("bytes", res.body.size());
  number("duration_ms", seconds * 1000.0);
  field("user", r.user);
  field("remote", r.remote);
  line += '}';
  access.info(line);
}

http::Response App::handle(http::Request& req) {
  const auto started = std::chrono::steady_clock::now();
  if (auto id = req.header("x-request-id"); id && acceptable_request_id(*id))
    req.request_id = std::string(*id);
  else
    req.request_id = secrets::random_hex(8);

  std::string route_label = "(unmatched)";
  std::string user_label;
  http::Response res;
  try {
    res = dispatch(req, route_label, user_label);
  } catch (const http::Problem& p) {
    res = p.to_response();
  } catch (const db::DbError& e) {
    res = from_db_error(ctx_, e, req.request_id);
    ctx_.metrics.count("podium_database_errors_total", "Database errors seen by request handlers.");
  } catch (const std::exception& e) {
    ctx_.log->error(nlohmann::json{
        {"msg", "unhandled exception"}, {"request_id", req.request_id}, {"error", e.what()}}
                        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    res = http::Problem{500,
                        "",
                        "internal error (request " + req.request_id + ")",
                        {},
                        nlohmann::json::object()}
              .to_response();
  }
  res.set_header("X-Request-Id", req.request_id);
  RequestRecord rec{req.request_id, req.method,         route_label, req.path,
                    user_label,     req.remote_address, started};
  if (res.deferred && dynamic_cast<const RecordedOnAnswer*>(res.deferred.get())) {
    res.deferred = std::make_shared<Recorder>(*this, std::move(res.deferred), std::move(rec));
    return res;
  }
  record(rec, res);
  return res;
}

}  // namespace podium::api
