#pragma once
// Goodput of a run and its badput breakdown (domain brief §2.4). Pure: no I/O; all times are
// seconds on one clock (e.g. Unix epoch seconds as doubles).
//
// Definitions. wall = finished_at - submitted_at (the run's whole life; for a live run pass now).
// Every second of wall lands in exactly one bucket:
//  productive              "ideal" part of every step execution that still counts: for each
//                          step, its last execution (earlier ones were redone after a restart),
//                          capped at the ideal step time for compile and warm-up steps.
//  compile                 first step of every attempt minus one ideal step (XLA compilation).
//  warm_up                 next warmup_steps steps of every attempt, each minus one ideal step.
//  lost_progress           ideal part of step executions that a later attempt redid (work lost
//                          between the last checkpoint and the failure).
//  checkpoint              checkpoint save seconds the attempt reported, taken first from the
//                          excess of steady steps over the ideal (MaxText's step time is the time
//                          between step completions, so a synchronous save inflates the step that
//                          follows it) and then from time outside steps.
//  data_loading            data-loading seconds the attempt reported, charged the same way after
//                          checkpoint.
//  infrastructure_recovery time between an attempt's start and its processes running (waiting for
//                          hosts, gang assembly), and every gap between one attempt's end and the
//                          next attempt's start (recovery or restart after a failure).
//  queueing                submitted_at to the first attempt's start.
//  other                   everything else: steady-step excess over the ideal that no reported
//                          cause explains, process start-up (imports, distributed init,
//                          checkpoint restore) and teardown, time after the last attempt.
// goodput = productive / wall.
//
// The ideal step time is options.ideal_step_seconds when given (pass the steady-state median);
// otherwise the median of all step executions that are neither compile nor warm-up; otherwise
// (a run of only compile/warm-up steps) each such step's whole time is overhead.

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct StepTime {
  std::int64_t step = 0;
  double seconds = 0;
};

struct AttemptTimeline {
  double start = 0;                               // attempt created / dispatched
  double end = 0;                                 // last rank ended (for a live attempt: now)
  double waiting_for_hosts_seconds = 0;           // start until every rank's process was running
  std::vector<StepTime> steps;                    // completed steps in the order they ran
  std::optional<double> checkpoint_save_seconds;  // total, when known
  std::optional<double> data_loading_seconds;     // total, when known
};

struct GoodputOptions {
  int warmup_steps = 2;
  std::optional<double> ideal_step_seconds;
};

struct Badput {
  double compile = 0;
  double warm_up = 0;
  double data_loading = 0;
  double checkpoint = 0;
  double lost_progress = 0;
  double infrastructure_recovery = 0;
  double queueing = 0;
  double other = 0;
  double total() const {
    return compile + warm_up + data_loading + checkpoint + lost_progress + infrastructure_recovery +
           queueing + other;
  }
};

struct GoodputReport {
  double wall_seconds = 0;
  double productive_seconds = 0;
  std::optional<double> goodput;  // productive / wall; absent when wall is 0
  Badput badput;
  std::optional<double> ideal_step_seconds;
  std::int64_t productive_steps = 0;  // distinct steps whose last execution counts
  std::int64_t redone_step_executions = 0;
  // Inputs overlapped (attempts out of order, steps longer than their attempt): the buckets then
  // add up to more than wall by this much. 0 for consistent inputs.
  double overlap_seconds = 0;
};

// Attempts in the order they ran.
GoodputReport compute_goodput(double submitted_at, double finished_at,
                              const std::vector<AttemptTimeline>& attempts,
                              const GoodputOptions& options = {});

// {"wall_seconds","productive_seconds","goodput","ideal_step_seconds","productive_steps",
//  "redone_step_executions","overlap_seconds","badput":{"compile","warm_up","data_loading",
//  "checkpoint","lost_progress","infrastructure_recovery","queueing","other"}}
nlohmann::json to_json(const GoodputReport& r);
nlohmann::json to_json(const Badput& b);

}  // namespace podium::core
