#pragma once
// The checkpoint a run's `init_from` {"run","step"} names (issue 30.4), for its launch: the
// first attempt starts from it (MaxText's load_parameters_path, the reference workload's
// --init-from); a restart resumes from the run's own checkpoints, which the trainers prefer.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"

namespace podium::sched {

// nullopt without init_from. Throws std::invalid_argument when the checkpoint is gone or
// deleted (the submission checked it; the source run may have been deleted since): the
// dispatcher fails the run with that message, as for any spec it cannot launch.
std::optional<std::string> init_from_checkpoint(db::Transaction& tx, const nlohmann::json& spec);

}  // namespace podium::sched
