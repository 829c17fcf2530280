// podium runs edit (name, tags, notes, project of a run after submission) and podium projects
// (named groups of runs): the CLI side of issue 30.3's curation.

#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/cli/exit_codes.h"

namespace podium::cli {
namespace {

std::string project_path(const std::string& name) {
  return "/api/v1/projects/" + segment(name);
}

// PATCH /runs/{id} with what the options name; nothing named is a usage error, not a request.
int runs_edit(Context& ctx) {
  Json body = Json::object();
  if (auto name = ctx.args.value("name")) body["name"] = *name;
  if (ctx.args.has("tag") && ctx.args.has("clear-tags"))
    return usage_error(ctx, "--tag and --clear-tags exclude each other");
  if (ctx.args.has("tag")) body["tags"] = ctx.args.values("tag");
  if (ctx.args.has("clear-tags")) body["tags"] = Json::array();
  if (ctx.args.has("notes") && ctx.args.has("notes-file"))
    return usage_error(ctx, "--notes and --notes-file exclude each other");
  if (auto notes = ctx.args.value("notes")) body["notes"] = *notes;
  if (auto file = ctx.args.value("notes-file")) {
    int exit = kExitOk;
    auto text = read_input(ctx, *file, exit);
    if (!text) return exit;
    body["notes"] = *text;
  }
  if (ctx.args.has("project") && ctx.args.has("no-project"))
    return usage_error(ctx, "--project and --no-project exclude each other");
  if (auto project = ctx.args.value("project")) body["project"] = *project;
  if (ctx.args.has("no-project")) body["project"] = nullptr;
  if (body.empty())
    return usage_error(ctx,
                       "nothing to change: give --name, --tag, --clear-tags, --notes, "
                       "--notes-file, --project or --no-project");
  const Call c =
      call(ctx, "PATCH", "/api/v1/runs/" + segment(ctx.args.positionals[0]), body.dump());
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected a run object");
  Json shown = Json::object();
  for (const char* k : {"id", "name", "tags", "project", "notes"})
    if (c.json.contains(k)) shown[k] = c.json[k];
  ctx.out << render_details(shown);
  return kExitOk;
}

std::vector<Column> project_columns() {
  return {field_column("NAME", "name"), field_column("RUNS", "runs", true),
          field_column("CREATED BY", "created_by_name"),
          field_column("DESCRIPTION", "description")};
}

int projects_list(Context& ctx) {
  return print_list(ctx, "/api/v1/projects", project_columns(), "projects");
}

int projects_get(Context& ctx) {
  const Call c = call(ctx, "GET", project_path(ctx.args.positionals[0]));
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

int projects_create(Context& ctx) {
  Json body = {{"name", ctx.args.positionals[0]}};
  if (auto d = ctx.args.value("description")) body["description"] = *d;
  const Call c = call(ctx, "POST", "/api/v1/projects", body.dump());
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

int projects_edit(Context& ctx) {
  Json body = Json::object();
  if (auto n = ctx.args.value("name")) body["name"] = *n;
  if (auto d = ctx.args.value("description")) body["description"] = *d;
  if (body.empty()) return usage_error(ctx, "nothing to change: give --name or --description");
  const Call c = call(ctx, "PATCH", project_path(ctx.args.positionals[0]), body.dump());
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

int projects_delete(Context& ctx) {
  const std::string& name = ctx.args.positionals[0];
  const Call c = call(ctx, "DELETE", project_path(name));
  if (!c.ok()) return c.exit;
  if (ctx.json)
    print_raw(ctx, c);
  else
    ctx.out << "deleted project " << name << "\n";
  return kExitOk;
}

}  // namespace

void add_curation_commands(std::vector<Command>& out) {
  out.push_back(make_command(
      "runs", "edit", "ID", "change a run's name, tags, notes or project",
      {{"name", 0, true, false, "NAME", "the run's new name"},
       {"tag", 0, true, true, "TAG", "the run's tags (repeat; replaces every tag)"},
       {"clear-tags", 0, false, false, "", "remove every tag"},
       {"notes", 0, true, false, "TEXT", "the run's notes (replaces them; \"\" clears)"},
       {"notes-file", 0, true, false, "FILE", "the run's notes from FILE (- for stdin)"},
       {"project", 0, true, false, "PROJECT", "move the run into this project"},
       {"no-project", 0, false, false, "", "take the run out of its project"}},
      1, 1, runs_edit,
      "Any state, imported runs too; the run's owner or an admin. Example:\n"
      "  podium runs edit run_3f9c --tag sweep --tag lr-3e-4 --project llama-sweep"));
  out.push_back(make_command("projects", "list", "", "list projects (named groups of runs)",
                             {kLimitOption, kAllOption}, 0, 0, projects_list));
  out.push_back(make_command("projects", "get", "NAME", "show a project", {}, 1, 1, projects_get,
                             "Its runs: podium runs list --project NAME"));
  out.push_back(make_command("projects", "create", "NAME", "create a project",
                             {{"description", 0, true, false, "TEXT", "what the project is for"}},
                             1, 1, projects_create));
  out.push_back(make_command("projects", "edit", "NAME", "rename or describe a project",
                             {{"name", 0, true, false, "NEW", "the new name (its runs follow)"},
                              {"description", 0, true, false, "TEXT", "the new description"}},
                             1, 1, projects_edit));
  out.push_back(make_command("projects", "delete", "NAME",
                             "delete a project (refused while it holds runs)", {}, 1, 1,
                             projects_delete));
}

}  // namespace podium::cli
