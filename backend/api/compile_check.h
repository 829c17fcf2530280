#pragma once
// The compile-check preflight's submission side (docs/planner.md, "Compile check"): a run with
// `preflight: compile` gets a child run that compiles its training step on a host of the
// compile cluster (MaxText.train_compile with compile_topology, or the reference workload's
// --compile-only) and the run waits until the dispatcher has read the compiler's figure
// (backend/sched/dispatch/compile_checks.h).

#include <string>

#include "backend/api/api_context.h"
#include "backend/api/run_submission.h"

namespace podium::api {

// Creates the child run in the caller's transaction and marks the run as waiting for it.
// Throws a 422 Problem when the compile cluster is unknown.
void create_compile_check(ApiContext& ctx, db::Transaction& tx, const std::string& run_id,
                          const Submission& s, const std::string& owner_id);

}  // namespace podium::api
