#pragma once
// When a running attempt counts as stalled (issue 30): the bound on its silence and the verdict.
// Pure, clock injected: every time is seconds on one clock the caller chose (the sweep in
// backend/sched/dispatch/stall_watch.h passes the database's, which also stamped the steps).
//
// Two phases:
//   steps       the attempt has logged a step. Bound = max(k x its steady step time, floor):
//               the steady step time is the robust median of its latest steps
//               (engine/core/metrics/steady_state.h: compile and warm-up steps dropped); without
//               one (too few steps yet) the floor alone. Silence = now - when its latest step
//               was stored.
//   first_step  no step yet: it is compiling. Bound = max(compile_factor x the longest
//               time-to-first-step in its history, floor), the history being this run's earlier
//               attempts, else recent attempts of runs of the same model on the same cluster;
//               without any, max(the server's compile allowance, floor). Silence = now - when
//               the attempt started running (every rank up).
// floor is the run's stall_seconds, else the server's (stalls.default_seconds): the least
// silence that counts. An attempt of a workload that is not known to log steps (a `command`)
// and has no history of steps is never judged in the first_step phase: nothing says it trains.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::sched {

struct StallSettings {
  double floor_seconds = 300;     // stalls.default_seconds: the least silence that counts
  double step_factor = 10;        // stalls.step_factor: k
  double compile_seconds = 1800;  // stalls.compile_seconds: allowance without history
  // The history's longest time-to-first-step times this: a compile cache that was warm once may
  // be cold now, and a restore adds to the compile.
  double compile_factor = 3;
  int limit = 3;  // stalls.limit: the stall of a run that ends it as failed
};

struct StepTiming {
  std::int64_t step = 0;
  double seconds = 0;  // the step's own time as logged
};

struct StallInput {
  double now = 0;
  double running_since = 0;  // when the attempt became running
  std::optional<std::int64_t> last_step;
  std::optional<double> last_step_at;            // when its latest step was stored
  std::vector<StepTiming> recent_steps;          // the attempt's latest steps (any order)
  std::vector<double> run_first_step_seconds;    // this run's earlier attempts' time to step 1
  std::vector<double> model_first_step_seconds;  // same model, same cluster, other runs
  std::optional<double> run_stall_seconds;       // the run's stall_seconds, when it sets one
  bool logs_steps = true;  // the workload is known to log steps (maxtext, reference)
};

enum class StallPhase { first_step, steps };
std::string_view to_string(StallPhase p);

struct StallBound {
  StallPhase phase = StallPhase::steps;
  double seconds = 0;        // the bound
  double floor_seconds = 0;  // the floor it was held to
  std::string basis;  // steady_step_time | floor | run_history | model_history | server_default
  std::optional<double> steady_step_seconds;  // steps: the steady step time, when known
  std::size_t steady_steps = 0;               // steps it rests on
  std::optional<double> history_seconds;      // first_step: the longest time-to-first-step used
  std::size_t history_attempts = 0;
  std::string derivation;  // one sentence: how the bound was derived
};

// The bound for the attempt as it is now; nullopt when it is not judged (a first_step phase of
// an attempt that is not known to train).
std::optional<StallBound> stall_bound(const StallInput& in, const StallSettings& settings);

struct StallVerdict {
  StallBound bound;
  double silence_seconds = 0;
  std::optional<std::int64_t> last_step;
};

// Stalled when the silence exceeds the bound.
std::optional<StallVerdict> check_stall(const StallInput& in, const StallSettings& settings);

// The stalled event's detail: {"phase","last_step","silence_seconds","bound_seconds",
// "floor_seconds","basis","steady_step_seconds","steady_steps","history_seconds",
// "history_attempts","derivation"}.
nlohmann::json to_json(const StallVerdict& v);
// "no step for 42 s after step 17 (bound 30 s: 10 x steady step 3 s)": the timeline's line.
std::string describe(const StallVerdict& v);

}  // namespace podium::sched
