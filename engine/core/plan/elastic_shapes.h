#pragma once
// Every slice count an elastic run may run on, planned like a submission (issue 30 point 5,
// docs/planner.md "Elastic shapes"). A run with min_slices may be placed on any count from
// min_slices to its slices; each count gets its layout (elastic_layout.h) and a full plan (mesh,
// HBM, data, throughput) of the spec with that layout on that many slices. The submission shows
// them (the plan's "elastic" list) and is refused when its min_slices shape cannot run; the
// dispatcher shrinks and grows only onto counts whose plan passes. Pure.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/plan/elastic_layout.h"
#include "engine/core/plan/planner.h"

namespace podium::core {

struct ElasticShape {
  int slices = 1;
  ElasticLayout layout;
  // "ok": plans without errors; "skipped": its errors are all skipped by the spec (skip_checks,
  // force); "refused": an error remains; "no_layout": no layout of the DCN axes exists (a mesh
  // problem: skip_checks "mesh" waives it like the mesh check's own errors).
  std::string verdict;
  std::vector<std::string> problems;  // the errors' messages (and the layout's reason)
  std::vector<std::string> checks;    // the checks those errors belong to ("mesh", "hbm", ...)
  bool usable = false;                // verdict ok or skipped: the dispatcher may place on it
  std::optional<Plan> plan;           // absent when there is no layout
};

// The shapes from min_slices to the slices the spec asks for (spec.num_slices, else the
// input's cluster count), ascending. Empty when the spec has no min_slices or it is not below
// the slice count.
std::vector<ElasticShape> plan_elastic_shapes(const PlanInput& input);

// The spec written for `input` with `shape`'s parallelism on `shape.slices` slices (what the
// dispatcher launches): a copy of the stored spec JSON with parallelism replaced.
nlohmann::json spec_for_shape(const nlohmann::json& spec, const ElasticShape& shape);

// When the min_slices shape is not usable, adds to `plan` the error that refuses the submission
// (code elastic_min_slices, field min_slices; skipped like the errors it stands for) and marks
// the plan not ok. Returns whether it added one.
bool add_min_slices_error(Plan& plan, const std::vector<ElasticShape>& shapes, const RunSpec& spec);

// [{"slices","parallelism","changes","verdict","problems","memory_gib","fits"}]
nlohmann::json to_json(const std::vector<ElasticShape>& shapes);

}  // namespace podium::core
