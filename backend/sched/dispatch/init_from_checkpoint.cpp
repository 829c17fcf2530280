#include "backend/sched/dispatch/init_from_checkpoint.h"

#include <stdexcept>

namespace podium::sched {

std::optional<std::string> init_from_checkpoint(db::Transaction& tx, const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("init_from") || !spec["init_from"].is_object())
    return std::nullopt;
  const auto& init = spec["init_from"];
  if (!init.contains("run") || !init["run"].is_string() || !init.contains("step") ||
      !init["step"].is_number_integer())
    throw std::invalid_argument("init_from must be {\"run\":ID,\"step\":N}");
  const std::string run = init["run"].get<std::string>();
  const std::string step = std::to_string(init["step"].get<long long>());
  auto r = tx.exec("SELECT uri, state FROM checkpoints WHERE run_id = $1 AND step = $2::bigint",
                   {run, step});
  if (r.empty())
    throw std::invalid_argument("init_from: run " + run + " has no checkpoint at step " + step);
  if (r.at(0, "state") != "complete")
    throw std::invalid_argument("init_from: checkpoint " + step + " of run " + run + " is " +
                                r.at(0, "state"));
  return r.at(0, "uri");
}

}  // namespace podium::sched
