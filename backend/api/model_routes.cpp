// Models as data: the built-in catalog (seeded from engine/core/models/*.yaml, read-only) and the
// models users add as MaxText model configs (YAML or JSON), owned by their creator.
#include <regex>

#include "backend/api/api_context.h"
#include "backend/api/model_store.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

constexpr size_t kMaxYamlBytes = 256 * 1024;

// MaxText model_name style: llama3.1-8b, almodel-8b, team_model-v2.
bool valid_model_name(const std::string& name) {
  static const std::regex pattern("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  return std::regex_match(name, pattern);
}

// The architecture of a POST or PATCH body: exactly one of "yaml" (a MaxText model file) and
// "config" (the same keys as a JSON object). 422 naming the field when it cannot be counted.
struct ParsedBody {
  core::Parsed<core::ModelConfig> parse;
  std::optional<std::string> yaml;
};
std::optional<ParsedBody> read_architecture(http::ObjectReader& in, bool required) {
  auto yaml = in.string("yaml", false, kMaxYamlBytes);
  auto config = in.object("config", false);
  if (yaml && config) in.error("config", "give either yaml or config, not both");
  if (required && !yaml && !config && !in.present("yaml") && !in.present("config"))
    in.error("config", "required: the model's MaxText config as yaml (text) or config (object)");
  if (!yaml && !config) return std::nullopt;
  ParsedBody out;
  out.parse = yaml ? core::parse_model_config_yaml(*yaml) : core::parse_model_config_json(*config);
  out.yaml = yaml;
  return out;
}

void refuse_unparsed(const ParsedBody& body) {
  if (body.parse.ok()) return;
  const std::string field = body.yaml ? "yaml" : "config";
  throw http::unprocessable("the model config cannot be read: " + body.parse.summary(),
                            {{field, body.parse.summary()}});
}

// Built-ins are the catalog files' rows, refreshed at every start: nobody edits them through the
// API (an edit would be overwritten). Others: their creator or an admin.
void check_may_change(const http::RequestContext& rc, const StoredModel& m, const char* verb) {
  if (m.builtin)
    throw http::forbidden("model " + m.spec.name + " is built in (seeded from the catalog " +
                          "files at every start) and cannot be " + verb +
                          "; add your own copy under another name");
  if (!rc.principal->is_admin() && m.created_by != user_id(rc))
    throw http::forbidden(std::string("only the model's creator or an admin may ") +
                          (std::string(verb) == "deleted" ? "delete" : "change") + " it");
}

void refuse_while_live(db::Transaction& tx, const std::string& name, const char* verb) {
  auto live = tx.exec(
      "SELECT count(*) AS n FROM runs WHERE model = $1 AND state NOT IN "
      "('succeeded', 'failed', 'cancelled')",
      {name});
  if (live.int64(0, "n") > 0)
    throw http::conflict(std::to_string(live.int64(0, "n")) + " live run(s) use model " + name +
                         "; it cannot be " + verb + " until they finish");
}

StoredModel require_model(db::Transaction& tx, const std::string& name) {
  auto m = load_model(tx, name);
  if (!m) {
    auto p = http::not_found("no model " + name);
    p.extra["valid_choices"] = stored_model_names(tx);
    throw p;
  }
  return std::move(*m);
}

http::Response list_models(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  ctx.db.transact(
      [&](db::Transaction& tx) {
        auto r = tx.exec(model_select("WHERE ($1::bigint IS NULL OR seq < $1) "
                                      "ORDER BY seq DESC LIMIT $2"),
                         {page.after_param(), page.limit_param()});
        for (size_t i = 0; i < r.size(); ++i) {
          items.push_back(model_json(stored_model(r, i), false));
          seqs.push_back(r.int64(i, "seq"));
        }
      },
      db::TxMode::read_only);
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response get_model(ApiContext& ctx, http::RequestContext& rc) {
  auto m = ctx.db.transact([&](db::Transaction& tx) { return require_model(tx, rc.param("name")); },
                           db::TxMode::read_only);
  return json_response(200, model_json(m, true));
}

http::Response create_model(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", true, 64);
  auto description = in.string("description", false, 1000);
  if (name && !valid_model_name(*name))
    in.error("name", "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
  auto arch = read_architecture(in, true);
  in.reject_unknown_fields();
  in.finish();
  refuse_unparsed(*arch);

  const std::string id = new_id("mdl");
  auto m = ctx.db.transact([&](db::Transaction& tx) {
    if (!tx.exec("SELECT 1 FROM models WHERE name = $1", {*name}).empty())
      throw http::conflict("a model named '" + *name + "' exists");
    tx.exec(
        "INSERT INTO models (id, name, description, config, source_yaml, created_by) "
        "VALUES ($1, $2, $3, $4::jsonb, $5, $6)",
        {id, *name, description.value_or(""), arch->parse.value->config.dump(),
         arch->yaml ? db::Param(*arch->yaml) : db::Param(), user_id(rc)});
    const auto counts = core::count_parameters(arch->parse.value->model);
    audit(tx, rc, "create", "model", id,
          {{"name", *name}, {"parameters", counts.total}, {"form", arch->yaml ? "yaml" : "json"}});
    return require_model(tx, *name);
  });
  return json_response(201, model_json(m, true));
}

http::Response update_model(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto description = in.string("description", false, 1000);
  auto arch = read_architecture(in, false);
  in.reject_unknown_fields();
  in.finish();
  if (arch) refuse_unparsed(*arch);
  auto m = ctx.db.transact([&](db::Transaction& tx) {
    const StoredModel before = require_model(tx, rc.param("name"));
    check_may_change(rc, before, "changed");
    nlohmann::json changed = nlohmann::json::array();
    if (description) {
      tx.exec("UPDATE models SET description = $2, updated_at = now() WHERE id = $1",
              {before.id, *description});
      changed.push_back("description");
    }
    if (arch) {
      // The planner and the summaries read the architecture by name: a live run
      // would change under its own plan.
      refuse_while_live(tx, before.spec.name, "changed");
      tx.exec(
          "UPDATE models SET config = $2::jsonb, source_yaml = $3, updated_at = now() "
          "WHERE id = $1",
          {before.id, arch->parse.value->config.dump(),
           arch->yaml ? db::Param(*arch->yaml) : db::Param()});
      changed.push_back("config");
    }
    audit(tx, rc, "update", "model", before.id, {{"name", before.spec.name}, {"changed", changed}});
    return require_model(tx, before.spec.name);
  });
  return json_response(200, model_json(m, true));
}

http::Response delete_model(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    const StoredModel m = require_model(tx, rc.param("name"));
    check_may_change(rc, m, "deleted");
    refuse_while_live(tx, m.spec.name, "deleted");
    tx.exec("DELETE FROM models WHERE id = $1", {m.id});
    audit(tx, rc, "delete", "model", m.id, {{"name", m.spec.name}});
  });
  return http::Response::empty(204);
}

}  // namespace

void register_model_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/models", http::Access::reader, list_models);
  routes.add("GET", "/api/v1/models/{name}", http::Access::reader, get_model);
  routes.add("POST", "/api/v1/models", http::Access::writer, create_model);
  routes.add("PATCH", "/api/v1/models/{name}", http::Access::writer, update_model);
  routes.add("DELETE", "/api/v1/models/{name}", http::Access::writer, delete_model);
}

}  // namespace podium::api
