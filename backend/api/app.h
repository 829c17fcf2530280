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

class App {
 public:
  explicit App(ApiContext& ctx);
  ~App();
  http::Response handle(http::Request& req);
  const http::Router& router() const { return router_; }

 private:
  http::Response dispatch(http::Request& req, std::string& route_label, std::string& user_label);
  ApiContext& ctx_;
  http::Router router_;
  std::unique_ptr<http::StaticFiles> static_files_;
};

// Resolves the caller from "Authorization: Bearer" or the session cookie. nullopt: no
// credentials were presented. Throws Problem 401 for credentials that are not valid.
std::optional<http::Principal> authenticate(ApiContext& ctx, const http::Request& req);

// Access rule check; throws Problem 401/403.
void authorize(http::Access access, const std::optional<http::Principal>& principal);

}  // namespace podium::api
