// /healthz (process alive), /readyz (database reachable), /metrics (Prometheus). No token.
#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"

namespace podium::api {

namespace {

http::Response healthz(ApiContext&, http::RequestContext&) {
  return json_response(200, {{"status", "ok"}});
}

http::Response readyz(ApiContext& ctx, http::RequestContext&) {
  if (ctx.db.ping()) return json_response(200, {{"status", "ready"}, {"database", "ok"}});
  auto r = json_response(503, {{"status", "unavailable"}, {"database", "unreachable"}});
  r.set_header("Retry-After", "1");
  return r;
}

http::Response prometheus_metrics(ApiContext& ctx, http::RequestContext&) {
  return http::Response::text(200, ctx.metrics.render(),
                              "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace

void register_health_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  // Liveness: its own threads, so a probe answers while every handler thread is busy.
  routes.add("GET", "/healthz", http::Access::open, healthz, http::liveness_lane());
  routes.add("GET", "/readyz", http::Access::open, readyz);
  routes.add("GET", "/metrics", http::Access::open, prometheus_metrics);
}

}  // namespace podium::api
