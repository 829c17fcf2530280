// /healthz (process alive), /readyz (database reachable), /metrics (Prometheus). No token.
#include "backend/api/api_context.h"
#include "backend/api/sql_util.h"

namespace podium::api {

void register_health_routes(http::Router& router, ApiContext& ctx) {
  router.add("GET", "/healthz", http::Access::open, [](http::RequestContext&) {
    return json_response(200, {{"status", "ok"}});
  });
  router.add("GET", "/readyz", http::Access::open, [&ctx](http::RequestContext&) {
    if (ctx.db.ping()) return json_response(200, {{"status", "ready"}, {"database", "ok"}});
    auto r = json_response(503, {{"status", "unavailable"}, {"database", "unreachable"}});
    r.set_header("Retry-After", "1");
    return r;
  });
  router.add("GET", "/metrics", http::Access::open, [&ctx](http::RequestContext&) {
    return http::Response::text(200, ctx.metrics.render(),
                                "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace podium::api
