#include "backend/sched/stall_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/metrics/steady_state.h"

namespace podium::sched {

namespace {

// Seconds as the timeline shows them: whole above 10, one decimal below.
std::string secs(double s) {
  char buf[32];
  if (s >= 10)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}

std::optional<double> longest_positive(const std::vector<double>& values, std::size_t* count) {
  std::optional<double> out;
  *count = 0;
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) continue;
    ++*count;
    out = out ? std::max(*out, v) : v;
  }
  return out;
}

StallBound steps_bound(const StallInput& in, const StallSettings& s, double floor) {
  StallBound b;
  b.phase = StallPhase::steps;
  b.floor_seconds = floor;
  std::vector<core::StepSample> samples;
  samples.reserve(in.recent_steps.size());
  for (const auto& t : in.recent_steps) samples.push_back({t.step, t.seconds, {}, {}});
  const auto steady = core::compute_steady_state(samples);
  if (steady.median_seconds && steady.kept_count > 0) {
    b.steady_step_seconds = *steady.median_seconds;
    b.steady_steps = steady.kept_count;
  }
  const double scaled = b.steady_step_seconds ? s.step_factor * *b.steady_step_seconds : 0;
  if (b.steady_step_seconds && scaled > floor) {
    b.seconds = scaled;
    b.basis = "steady_step_time";
    b.derivation = factor(s.step_factor) + " x steady step " + secs(*b.steady_step_seconds) + " (" +
                   std::to_string(b.steady_steps) + " steps)";
  } else {
    b.seconds = floor;
    b.basis = "floor";
    b.derivation = "stall_seconds " + secs(floor);
    if (b.steady_step_seconds)
      b.derivation += " (above " + factor(s.step_factor) + " x steady step " +
                      secs(*b.steady_step_seconds) + ")";
    else
      b.derivation += " (no steady step time yet)";
  }
  return b;
}

std::optional<StallBound> first_step_bound(const StallInput& in, const StallSettings& s,
                                           double floor) {
  StallBound b;
  b.phase = StallPhase::first_step;
  b.floor_seconds = floor;
  std::size_t n = 0;
  auto history = longest_positive(in.run_first_step_seconds, &n);
  std::string whose = "this run's earlier attempts";
  b.basis = "run_history";
  if (!history) {
    history = longest_positive(in.model_first_step_seconds, &n);
    whose = "runs of the same model on this cluster";
    b.basis = "model_history";
  }
  if (!history && !in.logs_steps) return std::nullopt;
  double allowance = 0;
  if (history) {
    b.history_seconds = history;
    b.history_attempts = n;
    allowance = s.compile_factor * *history;
    b.derivation = "compile allowance " + factor(s.compile_factor) + " x " + secs(*history) +
                   ", the longest time to the first step of " + std::to_string(n) +
                   " attempt(s) of " + whose;
  } else {
    allowance = s.compile_seconds;
    b.basis = "server_default";
    b.derivation = "compile allowance " + secs(allowance) + " (server default, no history)";
  }
  if (floor > allowance) {
    b.derivation = "stall_seconds " + secs(floor) + " (above the " + b.derivation + ")";
    b.basis = "floor";
    allowance = floor;
  }
  b.seconds = allowance;
  return b;
}

}  // namespace

std::string_view to_string(StallPhase p) {
  return p == StallPhase::first_step ? "first_step" : "steps";
}

std::optional<StallBound> stall_bound(const StallInput& in, const StallSettings& settings) {
  double floor = settings.floor_seconds;
  if (in.run_stall_seconds && std::isfinite(*in.run_stall_seconds) && *in.run_stall_seconds > 0)
    floor = *in.run_stall_seconds;
  if (in.last_step) return steps_bound(in, settings, floor);
  return first_step_bound(in, settings, floor);
}

std::optional<StallVerdict> check_stall(const StallInput& in, const StallSettings& settings) {
  auto bound = stall_bound(in, settings);
  if (!bound) return std::nullopt;
  const double since =
      bound->phase == StallPhase::steps && in.last_step_at ? *in.last_step_at : in.running_since;
  const double silence = in.now - since;
  if (!(silence > bound->seconds)) return std::nullopt;
  StallVerdict v;
  v.bound = std::move(*bound);
  v.silence_seconds = silence;
  v.last_step = in.last_step;
  return v;
}

nlohmann::json to_json(const StallVerdict& v) {
  auto opt = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(nullptr); };
  return {{"phase", std::string(to_string(v.bound.phase))},
          {"last_step", opt(v.last_step)},
          {"silence_seconds", std::round(v.silence_seconds * 10) / 10},
          {"bound_seconds", std::round(v.bound.seconds * 10) / 10},
          {"floor_seconds", v.bound.floor_seconds},
          {"basis", v.bound.basis},
          {"steady_step_seconds", opt(v.bound.steady_step_seconds)},
          {"steady_steps", v.bound.steady_steps},
          {"history_seconds", opt(v.bound.history_seconds)},
          {"history_attempts", v.bound.history_attempts},
          {"derivation", v.bound.derivation}};
}

std::string describe(const StallVerdict& v) {
  std::string what = v.last_step ? "no step for " + secs(v.silence_seconds) + " after step " +
                                       std::to_string(*v.last_step)
                                 : "no first step " + secs(v.silence_seconds) + " after start";
  return "stalled: " + what + " (bound " + secs(v.bound.seconds) + ": " + v.bound.derivation + ")";
}

}  // namespace podium::sched
