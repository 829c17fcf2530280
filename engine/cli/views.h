#pragma once
// What each resource looks like on a terminal: the table columns per list, and the readable
// renderings of a plan, metrics series and a compare response. Field lookups tolerate the
// variants a resource may carry (e.g. a run's cluster as a name or as an object), and a missing
// field shows as "-" rather than failing.

#include <string>
#include <vector>

#include "engine/cli/json.h"
#include "engine/cli/output.h"

namespace podium::cli {

std::vector<Column> cluster_columns();  // NAME ACCELERATOR TOPOLOGY SLICES CAPACITY ZONE HOSTS ...
std::vector<Column> dataset_columns();  // NAME FORMAT RECORDS BYTES TOKENS CREATED URI
std::vector<Column> run_columns();      // ID NAME STATE CLUSTER MODEL STEP RESTARTS CREATED
std::vector<Column> attempt_columns();  // ATTEMPT STATE STARTED ENDED EXIT FAILURE STEPS HOSTS
std::vector<Column> run_event_columns();    // AT FROM TO CAUSE
std::vector<Column> checkpoint_columns();   // STEP URI SIZE CREATED
std::vector<Column> worker_columns();       // ID SLICE HOST HOSTNAME ADDRESS DEVICES STATE ...
std::vector<Column> model_columns();        // NAME WORKLOAD DECODER LAYERS PARAMS ACTIVE MOE
std::vector<Column> accelerator_columns();  // TYPE FAMILY TOPOLOGY CHIPS DEVICES HOSTS TFLOP/S HBM

// The plan of POST /api/v1/plan (or the "plan" of a run) as a readable verdict.
std::string render_plan(const Json& plan);
// A one-line verdict of a plan: "ok, 1 warning" / "2 errors, 0 warnings".
std::string plan_verdict(const Json& plan);

// {"steps":[...],"series":{"loss":[...]}} as a STEP + one column per series table. `fields`
// orders the columns (series not named there follow in the server's order).
std::string render_metrics(const Json& metrics, const std::vector<std::string>& fields);

// {"baseline":ID,"rows":[...]}: one line per run; ratios to the baseline in parentheses.
std::string render_compare(const Json& compare);

// A plan-against-actual verdict (a summary's or compare row's "plan_check", or a run's
// "flags.underperforming", whose verdict is underperforming) in one line: "underperforming:
// 0.577 TFLOP/s/device measured, 346.1 expected by the plan (0.00167×)"; "" when `check` is
// not such an object.
std::string plan_check_text(const Json& check);
// The compare table's cell: the ratio, "0.00167× UNDERPERFORMING" when flagged; "-" without one.
std::string plan_check_cell(const Json* check);

// A run's "state" with its failure class when it has one: "failed (oom)".
std::string run_state_text(const Json& run);

}  // namespace podium::cli
