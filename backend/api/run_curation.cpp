#include "backend/api/run_curation.h"

#include <algorithm>

#include "backend/api/run_view.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "engine/core/spec/spec_parser.h"

namespace podium::api {

namespace {

// The same rules as the run spec's (engine/core/spec/run_spec.cpp, spec_parser.h), so a run can
// be renamed, retagged and moved to anything it could have been submitted with.
constexpr size_t kRunNameMax = 128;
constexpr size_t kRunTagsMax = 32;
constexpr size_t kRunTagLengthMax = 64;
// Notes are prose, not logs: 64 KiB is pages of it.
constexpr size_t kRunNotesMax = 64 * 1024;

// PostgreSQL text cannot hold NUL: refused as input rather than failing the statement.
bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

void require_project_exists(db::Transaction& tx, const std::string& name) {
  if (!tx.exec("SELECT 1 FROM projects WHERE name = $1", {name}).empty()) return;
  throw http::unprocessable("no project named '" + name + "'; create it with POST /api/v1/projects",
                            {{"project", "no such project: " + name}});
}

struct RunChanges {
  std::optional<std::string> name;
  std::optional<std::vector<std::string>> tags;
  std::optional<std::string> notes;
  bool project_given = false;
  std::optional<std::string> project;  // null with project_given: detach
};

// The body's fields, each checked; every field error at once (422).
RunChanges read_run_changes(const nlohmann::json& body) {
  http::ObjectReader in(body);
  RunChanges c;
  c.name = in.string("name", false, kRunNameMax);
  if (c.name && !core::spec_detail::valid_name(*c.name))
    in.error("name",
             "must be 1-128 characters of letters, digits, '-', '_' or '.', starting with a "
             "letter or digit");
  if (in.present("name") && in.is_null("name")) in.error("name", "must be a string");
  if (auto tags = in.string_array("tags", false, kRunTagsMax)) {
    std::vector<std::string> unique;
    for (size_t i = 0; i < tags->size(); ++i) {
      const std::string& t = (*tags)[i];
      const std::string field = "tags[" + std::to_string(i) + "]";
      if (t.empty() || t.size() > kRunTagLengthMax || has_nul(t))
        in.error(field, "1-" + std::to_string(kRunTagLengthMax) + " characters, no NUL");
      else if (std::find(unique.begin(), unique.end(), t) == unique.end())
        unique.push_back(t);
    }
    c.tags = std::move(unique);
  } else if (in.present("tags") && in.is_null("tags")) {
    in.error("tags", "must be an array of strings ([] removes every tag)");
  }
  c.notes = in.string("notes", false, kRunNotesMax);
  if (c.notes && has_nul(*c.notes)) in.error("notes", "must not contain NUL characters");
  if (in.present("notes") && in.is_null("notes")) c.notes = "";
  c.project_given = in.present("project");
  c.project = in.string("project", false, 128);
  if (c.project && !valid_project_name(*c.project))
    in.error("project",
             "a project name: 1-128 letters, digits, '.', '_' or '-', starting with a letter or "
             "digit");
  in.reject_unknown_fields();
  if (!in.errors().empty()) throw http::unprocessable("the run's changes are invalid", in.errors());
  if (!c.name && !c.tags && !c.notes && !c.project_given)
    throw http::unprocessable("nothing to change: give name, tags, notes or project",
                              {{"name", "give at least one of name, tags, notes, project"}});
  return c;
}

}  // namespace

bool valid_project_name(const std::string& name) {
  return core::spec_detail::valid_name(name);
}

void apply_spec_curation(db::Transaction& tx, const std::string& run_id,
                         const nlohmann::json& spec) {
  auto notes = spec.find("notes");
  auto project = spec.find("project");
  const bool has_notes = notes != spec.end() && notes->is_string();
  const bool has_project = project != spec.end() && project->is_string();
  if (!has_notes && !has_project) return;
  if (has_notes && has_nul(notes->get<std::string>()))
    throw http::unprocessable("notes must not contain NUL characters",
                              {{"notes", "must not contain NUL characters"}});
  if (has_project) {
    const std::string name = project->get<std::string>();
    if (!valid_project_name(name))
      throw http::unprocessable("project '" + name + "' is not a project name",
                                {{"project", "1-128 letters, digits, '.', '_' or '-'"}});
    require_project_exists(tx, name);
  }
  tx.exec(
      "UPDATE runs SET notes = COALESCE($2, notes), project = COALESCE($3, project) "
      "WHERE id = $1",
      {run_id, has_notes ? db::Param(notes->get<std::string>()) : db::Param(),
       has_project ? db::Param(project->get<std::string>()) : db::Param()});
}

http::Response patch_run(ApiContext& ctx, http::RequestContext& rc) {
  const RunChanges c = read_run_changes(http::parse_json_object(rc.request));
  const std::string& id = rc.param("id");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto cur = tx.exec("SELECT owner_id FROM runs WHERE id = $1 FOR UPDATE", {id});
    if (cur.empty()) throw http::not_found("no run " + id);
    if (!rc.principal->is_admin() && cur.at(0, "owner_id") != user_id(rc))
      throw http::forbidden("only the run's owner or an admin may change it");
    if (c.project) require_project_exists(tx, *c.project);
    nlohmann::json changed = nlohmann::json::object();
    if (c.name) changed["name"] = *c.name;
    if (c.tags) changed["tags"] = *c.tags;
    if (c.notes) changed["notes_bytes"] = c.notes->size();
    if (c.project_given) changed["project"] = c.project ? nlohmann::json(*c.project) : nullptr;
    // Curation is not a state change: updated_at (the state machine's clock) stays.
    tx.exec(
        "UPDATE runs SET name = COALESCE($2, name), "
        "tags = CASE WHEN $3::jsonb IS NULL THEN tags "
        "ELSE ARRAY(SELECT jsonb_array_elements_text($3::jsonb)) END, "
        "notes = COALESCE($4, notes), project = CASE WHEN $5 THEN $6 ELSE project END "
        "WHERE id = $1",
        {id, c.name ? db::Param(*c.name) : db::Param(),
         c.tags ? db::Param(nlohmann::json(*c.tags).dump()) : db::Param(),
         c.notes ? db::Param(*c.notes) : db::Param(), c.project_given ? "true" : "false",
         c.project ? db::Param(*c.project) : db::Param()});
    audit(tx, rc, "update", "run", id, changed);
    return load_run(tx, id);
  });
  return json_response(200, run_json(r, 0, false));
}

}  // namespace podium::api
