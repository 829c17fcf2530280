#pragma once
// The compile-check preflight's verdict (docs/planner.md, "Compile check"). A run submitted with
// `preflight: compile` waits (preflight_state 'pending') while its child run compiles the
// training step on a host of the compile cluster. Once the child has ended, the compiler's
// figure ("Total memory size", log_facts.hbm with source compiler_total) decides:
//   - it fits the per-device HBM the run's accelerator offers: the run's plan gets
//     memory.basis "compiled" with that figure, and the run may be placed;
//   - it does not fit: the run is refused (failed, class oom) with an hbm_exceeded error
//     quoting the compiled figure;
//   - the child ended without a figure: the run fails (class config), naming the child.
// Runs in the dispatcher's transaction, once a second.

#include <spdlog/logger.h>

#include <memory>

#include "backend/db/database.h"

namespace podium::sched {

int check_compile_preflights(db::Transaction& tx, const std::shared_ptr<spdlog::logger>& log);

}  // namespace podium::sched
