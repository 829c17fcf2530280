#pragma once
// How a resource file registers its routes: one line per route naming its handler, with what the
// route declares (access, lane, body limit) beside it. The handlers are named functions of the
// resource file; the table binds the context they are called with.

#include <functional>
#include <string>
#include <utility>

#include "backend/api/api_context.h"
#include "backend/common/router.h"

namespace podium::api {

// A named handler of the resource file (or a lambda binding one to state it keeps).
using ApiHandler = std::function<http::Response(ApiContext&, http::RequestContext&)>;

class RouteTable {
 public:
  RouteTable(http::Router& router, ApiContext& ctx) : table_(router), ctx_(ctx) {}

  // traits: the lane (agent heartbeats: liveness) and a body limit above the server's
  // (code bundle uploads); the defaults suit every other route.
  void add(std::string method, std::string pattern, http::Access access, ApiHandler handler,
           http::RouteTraits traits = {}) {
    table_.add(
        std::move(method), std::move(pattern), access,
        [&ctx = ctx_, handler = std::move(handler)](http::RequestContext& rc) {
          return handler(ctx, rc);
        },
        std::move(traits));
  }

 private:
  http::Router& table_;
  ApiContext& ctx_;
};

}  // namespace podium::api
