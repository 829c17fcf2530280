#pragma once
// What earlier runs measured, for the planner (engine/core/plan/planner.h HistoryFacts): the steady
// MFU of finished runs of the same model on the same slice type, and the HBM in use that the
// latest comparable run reported (same parallelism, remat policy and optimizer). The planner then
// says `efficiency_basis: history` / `basis: history` and how many runs the figure rests on.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "engine/core/plan/planner.h"

namespace podium::api {

std::optional<core::HistoryFacts> load_plan_history(db::Transaction& tx, const std::string& model,
                                                    const std::string& accelerator_type,
                                                    double peak_tflops_per_device,
                                                    const nlohmann::json& spec);

}  // namespace podium::api
