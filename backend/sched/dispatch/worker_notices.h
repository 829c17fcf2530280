#pragma once
// Preemption and termination notices from hosts (docs/agent-protocol.md, "Notices"). An agent
// that hears from its host's metadata server that the host is preempted, or is about to be
// stopped for maintenance, reports the notice in its heartbeat. The notice is a fact about the
// host's near future: the gang cannot finish on it, so every attempt holding a rank there ends
// now (Podium stops the other ranks too, and a checkpointing rank gets its SIGTERM grace), the
// attempt is classified preempted (recovered without spending the restart budget), and the
// worker takes no new ranks until its notice is withdrawn.

#include <optional>
#include <string>

#include "backend/db/database.h"
#include "backend/sched/dispatch/engine_settings.h"

namespace podium::sched {

// Records the notice a worker reports (nullopt: none stands). Returns true when it changed.
// A new notice ends the live attempts with a rank on that worker; a withdrawn one returns the
// worker to placement.
bool record_worker_notice(db::Transaction& tx, const std::string& worker_id,
                          const std::optional<std::string>& notice, const EngineSettings& settings);

}  // namespace podium::sched
