#pragma once
// Turns a run spec (POST /api/v1/runs or /plan body) into its validated form and its plan.
// engine/core does the validating and planning; this file looks up what the spec names
// (cluster, dataset) in the database so the plan rests on stored facts.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/api/api_context.h"
#include "engine/core/plan/elastic_shapes.h"
#include "engine/core/plan/planner.h"
#include "engine/core/spec/run_spec.h"

namespace podium::api {

struct Submission {
  core::RunSpec spec;
  std::string cluster_id;
  std::optional<std::string> dataset_id;
  nlohmann::json spec_json;  // the spec as stored (without "force")
  nlohmann::json plan;       // the planner's verdict (contract shape), with "elastic"
  // An elastic run's shapes, min_slices up (engine/core/plan/elastic_shapes.h); empty otherwise.
  std::vector<core::ElasticShape> elastic;
  bool plan_ok = false;
  // Errors remain that the spec does not skip (skip_checks, force): a submission is refused.
  bool plan_blocked = false;
  // The checks the spec skips, each with the error codes it waived in this plan (may be none).
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;
};

// Parses the spec (400 with field errors), resolves cluster and dataset (422 when unknown) and
// the model from the models table (model_store.h), and plans it inside the caller's
// transaction.
Submission prepare_submission(db::Transaction& tx, const nlohmann::json& body);

// A stored run's elastic shapes planned again on today's facts (the dispatcher's shrink and grow
// place only on usable ones). Throws what prepare_submission throws (e.g. the cluster is gone).
std::vector<core::ElasticShape> plan_stored_shapes(db::Transaction& tx,
                                                   const nlohmann::json& stored_spec);

}  // namespace podium::api
