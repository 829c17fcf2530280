// The accelerator catalog (engine/core/topology/accelerator.h), read-only: which slice types exist
// and what each is in chips, JAX devices and hosts, so that clients offer real names instead of
// guessing.
#include "engine/core/topology/accelerator.h"

#include <cctype>

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

http::Response list_accelerators(ApiContext&, http::RequestContext& rc) {
  const auto family = rc.request.query_param("family");
  const core::AcceleratorFamily* wanted = nullptr;
  if (family) {
    std::string lowered = *family;  // as accelerator names are read: case-insensitive
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    wanted = core::find_family(lowered);
    if (!wanted) {
      std::vector<std::string> names;
      for (const auto& f : core::accelerator_families()) names.push_back(f.name);
      auto p = http::bad_request("unknown accelerator family '" + *family + "'",
                                 {{"family", "must be one of the catalog's families"}});
      p.extra["valid_choices"] = names;
      throw p;
    }
  }
  nlohmann::json items = nlohmann::json::array();
  for (const auto& t : core::catalog_types())
    if (!wanted || t.family == wanted->name) items.push_back(core::to_json(t));
  return json_response(200, {{"items", items}, {"next_cursor", nullptr}});
}

}  // namespace

void register_accelerator_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/accelerators", http::Access::reader, list_accelerators);
}

}  // namespace podium::api
