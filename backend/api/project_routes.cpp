// Projects (issue 30.3): named groups of runs with a description. A run belongs to at most one
// project (runs.project, set by the spec's "project" or PATCH /runs/{id}); the runs list filters
// by it (GET /runs?project=). Any member may create a project; its creator or an admin changes
// or deletes it. A project that still holds runs is not deleted (409): detaching runs silently
// would lose the grouping a team built, so the runs are moved or cleared first.

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/run_curation.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

constexpr size_t kProjectDescriptionMax = 4000;

std::string project_select(const std::string& where) {
  return "SELECT p.id, p.seq, p.name, p.description, p.created_by, u.username AS "
         "created_by_name, "
         "(SELECT count(*) FROM runs r WHERE r.project = p.name) AS runs, " +
         rfc3339("p.created_at") + " AS created_at, " + rfc3339("p.updated_at") +
         " AS updated_at FROM projects p LEFT JOIN users u ON u.id = p.created_by " + where;
}

nlohmann::json project_json(const db::Result& r, size_t i) {
  return {{"id", r.at(i, "id")},
          {"name", r.at(i, "name")},
          {"description", r.at(i, "description")},
          {"created_by", nullable_string(r, i, "created_by")},
          {"created_by_name", nullable_string(r, i, "created_by_name")},
          {"runs", r.int64(i, "runs")},
          {"created_at", r.at(i, "created_at")},
          {"updated_at", r.at(i, "updated_at")}};
}

db::Result require_project(db::Transaction& tx, const std::string& name) {
  auto r = tx.exec(project_select("WHERE p.name = $1"), {name});
  if (r.empty()) throw http::not_found("no project " + name);
  return r;
}

void require_project_creator(const http::RequestContext& rc, const db::Result& r) {
  if (rc.principal->is_admin()) return;
  if (r.opt(0, "created_by") != user_id(rc))
    throw http::forbidden("only the project's creator or an admin may change or delete it");
}

// A description: prose without NUL (PostgreSQL text cannot hold it).
std::optional<std::string> read_description(http::ObjectReader& in) {
  auto d = in.string("description", false, kProjectDescriptionMax);
  if (d && d->find('\0') != std::string::npos)
    in.error("description", "must not contain NUL characters");
  return d;
}

void read_project_name(http::ObjectReader& in, const std::optional<std::string>& name) {
  if (name && !valid_project_name(*name))
    in.error("name", "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
}

void finish_or_422(http::ObjectReader& in, const std::string& detail) {
  in.reject_unknown_fields();
  if (!in.errors().empty()) throw http::unprocessable(detail, in.errors());
}

http::Response list_projects(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            project_select("WHERE ($1::bigint IS NULL OR p.seq < $1) ORDER BY p.seq DESC LIMIT $2"),
            {page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(project_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response get_project(ApiContext& ctx, http::RequestContext& rc) {
  auto r =
      ctx.db.transact([&](db::Transaction& tx) { return require_project(tx, rc.param("name")); },
                      db::TxMode::read_only);
  return json_response(200, project_json(r, 0));
}

http::Response create_project(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", true, 128);
  read_project_name(in, name);
  auto description = read_description(in);
  finish_or_422(in, "the project is invalid");
  const std::string id = new_id("prj");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    if (!tx.exec("SELECT 1 FROM projects WHERE name = $1", {*name}).empty())
      throw http::conflict("a project named '" + *name + "' exists");
    tx.exec("INSERT INTO projects (id, name, description, created_by) VALUES ($1, $2, $3, $4)",
            {id, *name, description.value_or(""), user_id(rc)});
    audit(tx, rc, "create", "project", id, {{"name", *name}});
    return require_project(tx, *name);
  });
  return json_response(201, project_json(r, 0));
}

// {"name"} renames (the runs follow: runs.project cascades), {"description"} describes.
http::Response update_project(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", false, 128);
  read_project_name(in, name);
  auto description = read_description(in);
  finish_or_422(in, "the project's changes are invalid");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto cur = require_project(tx, rc.param("name"));
    require_project_creator(rc, cur);
    const std::string id = cur.at(0, "id");
    if (name && *name != cur.at(0, "name") &&
        !tx.exec("SELECT 1 FROM projects WHERE name = $1", {*name}).empty())
      throw http::conflict("a project named '" + *name + "' exists");
    tx.exec(
        "UPDATE projects SET name = COALESCE($2, name), description = COALESCE($3, "
        "description), updated_at = now() WHERE id = $1",
        {id, name ? db::Param(*name) : db::Param(),
         description ? db::Param(*description) : db::Param()});
    nlohmann::json changed = nlohmann::json::object();
    if (name) changed["name"] = *name;
    if (description) changed["description"] = true;
    audit(tx, rc, "update", "project", id, changed);
    return require_project(tx, name.value_or(cur.at(0, "name")));
  });
  return json_response(200, project_json(r, 0));
}

http::Response delete_project(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    auto cur = require_project(tx, rc.param("name"));
    require_project_creator(rc, cur);
    // Locks the row so that no run joins the project between the count and the delete.
    tx.exec("SELECT 1 FROM projects WHERE id = $1 FOR UPDATE", {cur.at(0, "id")});
    auto held = tx.exec("SELECT count(*) AS n FROM runs WHERE project = $1", {cur.at(0, "name")});
    if (held.int64(0, "n") > 0)
      throw http::conflict("project " + cur.at(0, "name") + " holds " +
                           std::to_string(held.int64(0, "n")) +
                           " run(s); move them to another project or clear their project "
                           "(PATCH /api/v1/runs/{id} {\"project\": null}) first");
    tx.exec("DELETE FROM projects WHERE id = $1", {cur.at(0, "id")});
    audit(tx, rc, "delete", "project", cur.at(0, "id"), {{"name", cur.at(0, "name")}});
  });
  return http::Response::empty(204);
}

}  // namespace

void register_project_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/projects", http::Access::reader, list_projects);
  routes.add("POST", "/api/v1/projects", http::Access::writer, create_project);
  routes.add("GET", "/api/v1/projects/{name}", http::Access::reader, get_project);
  routes.add("PATCH", "/api/v1/projects/{name}", http::Access::writer, update_project);
  routes.add("DELETE", "/api/v1/projects/{name}", http::Access::writer, delete_project);
}

}  // namespace podium::api
