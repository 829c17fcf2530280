#pragma once
// The request pipeline: request id -> route -> authentication -> authorization -> handler ->
// error mapping -> access log and metrics. Free of socket code; the HTTP layer calls handle().

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "backend/api/api_context.h"
#include "backend/common/http_message.h"
#include "backend/common/router.h"

namespace podium::http {
class StaticFiles;
}  // namespace podium::http

namespace podium::api {

// A Deferred whose answer is the request's outcome (GET /runs/{id}'s batched read): App records
// the answer resume() gives in the access log and the request metrics, with the whole time,
// instead of the hand-over, as it does for other Deferreds (a long-poll's wait is not its cost).
class RecordedOnAnswer : public http::Deferred {};

class App {
 public:
  explicit App(ApiContext& ctx);
  ~App();
  http::Response handle(http::Request& req);
  const http::Router& router() const { return router_; }
  // The access log line and the request metrics of one request, once its answer is known.
  struct RequestRecord;
  void record(const RequestRecord& r, const http::Response& res) const;

 private:
  http::Response dispatch(http::Request& req, std::string& route_label, std::string& user_label);
  ApiContext& ctx_;
  http::Router router_;
  std::unique_ptr<http::StaticFiles> static_files_;
};

// Resolves the caller from "Authorization: Bearer" or the session cookie. nullopt: no
// credentials were presented. Throws Problem 401 for credentials that are not valid.
std::optional<http::Principal> authenticate(ApiContext& ctx, const http::Request& req);

// The problem+json answer to a database error that reached a handler (503 with Retry-After when
// the database is unavailable, 409/422 for constraint violations, 500 otherwise, logged).
http::Response from_db_error(ApiContext& ctx, const db::DbError& e, const std::string& request_id);

// Access rule check; throws Problem 401/403.
void authorize(http::Access access, const std::optional<http::Principal>& principal);

}  // namespace podium::api
