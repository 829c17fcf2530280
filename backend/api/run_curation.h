#pragma once
// Curation of runs (issue 30.3): what a team changes about a run after submission (name, tags,
// notes, project), for live, finished and imported runs alike. PATCH /api/v1/runs/{id}, and the
// spec's "project"/"notes" applied when a run is submitted.

#include <string>

#include <nlohmann/json.hpp>

#include "backend/api/api_context.h"
#include "backend/common/router.h"
#include "backend/db/database.h"

namespace podium::api {

// A project name (as the run spec's "project"): 1-128 letters, digits, '.', '_' or '-', starting
// with a letter or digit.
bool valid_project_name(const std::string& name);

// Sets the new run's notes and project from its stored spec ("notes", "project"); a project
// that does not exist is refused with 422 naming "project" (create it with POST /projects).
void apply_spec_curation(db::Transaction& tx, const std::string& run_id,
                         const nlohmann::json& spec);

// PATCH /api/v1/runs/{id} {"name","tags","notes","project"} (any subset; "project": null
// detaches the run). The owner or an admin; audited with the fields that changed.
http::Response patch_run(ApiContext& ctx, http::RequestContext& rc);

}  // namespace podium::api
