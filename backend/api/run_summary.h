#pragma once
// The summary of a run (GET /runs/{id}/summary, one row of GET /compare): what the run's stored
// facts say about its speed, efficiency and cost. The database part loads the facts; the pure
// part (summarize) turns them into JSON with engine/core's steady-state, goodput, accelerator and
// FLOPs functions, so that the arithmetic is testable without a database.
//
// Figures and where they come from:
//  step_seconds      median of the steady steps (engine/core/metrics/steady_state.h) over each
//  step's
//                    latest execution; compile and warm-up steps of every attempt, dispatch
//                    artefacts, outliers and (when the run ran out of data) its last step are
//                    excluded; "steady_state" lists the steps kept and every exclusion.
//  tflops_per_device median of the logged TFLOP/s/device of the steady steps; otherwise the
//                    per-step TFLOPs per device (MaxText's "Total TFLOPs" line, else the plan's
//                    estimate, else the model catalog's FLOPs count for the run's shape) divided
//                    by step_seconds. basis.tflops_per_device says which.
//  tokens_per_second_per_device  logged median, else per_device_batch_size x max_target_length
//                    x gradient_accumulation_steps / step_seconds (basis says which).
//  mfu               tflops_per_device / the accelerator's peak per *device* (tpu7x: 1153.5);
//                    null on CPU clusters (no peak).
//  hbm_gib_used      the highest "Memstats: ... Using (GB) U / L" a log printed (log_facts.hbm).
//  goodput           engine/core/metrics/goodput.h over the attempts' timelines (created, running,
//                    finished; a live run ends now). An imported run has no timestamps: its
//                    timeline is its logged step times alone (basis.goodput = "log_steps").
//  cost_per_billion_tokens = chips x price_per_chip_hour x step_seconds / 3600
//                    / (tokens_per_second_per_device x step_seconds x devices) x 1e9,
//                    when the cluster has a price; chips and devices of every slice.
//  plan_check        tflops_per_device against the planner's expectation
//                    (engine/core/plan/plan_vs_actual.h): the run's decision once made
//                    (runs.plan_check, backend/api/plan_check.h: decided_at and at_step set),
//                    until then what the figures say now (decided_at null); null when there is
//                    nothing to say (no expectation, not steady yet, the check off).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "engine/core/model/model_catalog.h"
#include "engine/core/plan/plan_vs_actual.h"

namespace podium::api {

struct MetricRow {
  int attempt_number = 1;
  std::int64_t step = 0;
  std::optional<double> step_seconds;
  std::optional<double> tflops_per_device;
  std::optional<double> tokens_per_second_per_device;
  bool rampup = false;
};

struct AttemptRow {
  int number = 1;
  int num_slices = 1;
  double created = 0;              // epoch seconds
  std::optional<double> running;   // every rank running
  std::optional<double> finished;  // ended (null while live)
};

// Everything the summary rests on, as stored.
struct RunFacts {
  std::string id;
  std::string name;
  std::string state;
  std::optional<std::string> failure_class;
  bool imported = false;
  std::string model;
  std::optional<core::ModelSpec> model_spec;  // the model's stored architecture, when it exists
  std::optional<std::string> accelerator;     // the run's own (imported) or its cluster's
  int num_slices = 1;                         // requested
  std::optional<double> price_per_chip_hour;
  std::int64_t restarts = 0;
  std::int64_t recoveries = 0;
  std::optional<std::int64_t> last_step;
  double created = 0;  // epoch seconds
  std::optional<double> finished;
  double now = 0;  // the database's clock when the facts were read
  nlohmann::json spec = nlohmann::json::object();
  nlohmann::json plan;  // null when none
  nlohmann::json log_facts = nlohmann::json::object();
  nlohmann::json plan_check;         // the stored plan-against-actual decision; null: not made yet
  std::vector<AttemptRow> attempts;  // by number
  std::vector<MetricRow> metrics;    // by attempt number, then step
};

// Loads a run's facts in the caller's transaction; throws Problem 404 for an unknown run.
// Without metrics (`with_metrics` false) `metrics` stays empty: load_run_metrics adds them.
RunFacts load_run_facts(db::Transaction& tx, const std::string& run_id, bool with_metrics = true);
void load_run_metrics(db::Transaction& tx, RunFacts& facts);

// What the run's plan-against-actual check compares with: the stored plan's expectation, or for
// a run stored without one (imported) what the planner would assume for its model on its
// accelerator. nullopt: nothing to compare with (a command on CPU, no model).
std::optional<core::PlanExpectation> plan_expectation(const RunFacts& facts);

// What the server's configuration changes in a summary.
struct SummaryOptions {
  core::PlanCheckOptions plan_check;  // summaries.underperforming_ratio
};

// The summary JSON (see the top of this file and docs/openapi.yaml RunSummary).
nlohmann::json summarize(const RunFacts& facts, const SummaryOptions& options = {});

}  // namespace podium::api
