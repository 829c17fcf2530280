#pragma once
// Plan against actual, decided once per run (issue 26 point 3). The first time a run's summary
// (run_summary.h) has steady figures to set against the planner's expectation
// (engine/core/plan/plan_vs_actual.h), that verdict is stored in runs.plan_check with the step and
// time it was made (migration 0018). From then on the run shows it in `flags` (run_view.h), its
// summary and every compare row show the stored verdict, and an underperforming one is a run
// event of kind `underperforming` (run_events.kind, with the figures in `detail`), the event a
// notification subscribes to as run.underperforming.
//
// Why once: the verdict is about the configuration the run was planned for, and the event must
// fire once per run, not whenever a live median wobbles around the threshold. Why a sweep rather
// than ingestion: a verdict needs the whole steady-state computation over every metrics row of
// the run, which a log batch's transaction should not pay; the sweep runs with the summary
// precompute (summaries.precompute_interval_seconds) and decides
//  - a live run (running, recovering, cancelling) with steps, once its summary has a verdict
//    (steady and an expectation); until then it is looked at again on the next sweep;
//  - a finished run at once: its verdict, or {"verdict":"none"} when there is nothing to say
//    (no expectation: CPU, unknown model; never steady), so it is not looked at again.
// Two replicas may sweep at once: the UPDATE only writes a run whose plan_check is still null,
// and only the transaction whose UPDATE wrote it records the event.

#include <string>

#include "backend/api/run_summary.h"
#include "backend/common/config.h"
#include "backend/db/database.h"

namespace podium::api {

// The summary options the server's configuration asks for (summaries.underperforming_ratio).
SummaryOptions summary_options(const ServerConfig& config);

// One sweep over at most max_runs undecided runs, newest first. Returns how many it decided.
int decide_plan_checks(db::Database& db, int max_runs, const SummaryOptions& options);

// Decides one run in the caller's transaction (the sweep's step, exposed for the import, whose
// run is finished at once). Returns whether this call stored the decision.
bool decide_plan_check(db::Transaction& tx, const std::string& run_id,
                       const SummaryOptions& options);

}  // namespace podium::api
