// The model catalog (engine/core data files), read-only.
#include "engine/core/model_catalog.h"

#include "backend/api/api_context.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"

namespace podium::api {

void register_model_routes(http::Router& router, ApiContext&) {
  router.add("GET", "/api/v1/models", http::Access::reader, [](http::RequestContext&) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& m : core::model_catalog()) items.push_back(core::to_json(m));
    return json_response(200, {{"items", items}, {"next_cursor", nullptr}});
  });
  router.add("GET", "/api/v1/models/{name}", http::Access::reader, [](http::RequestContext& rc) {
    const auto* m = core::find_model(rc.param("name"));
    if (!m) {
      auto p = http::not_found("no model " + rc.param("name"));
      p.extra["valid_choices"] = core::model_names();
      throw p;
    }
    return json_response(200, core::to_json(*m));
  });
}

}  // namespace podium::api
