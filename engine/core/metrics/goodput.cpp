#include "engine/core/metrics/goodput.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "engine/core/metrics/steady_state.h"

namespace podium::core {
namespace {

enum class Role { compile, warm_up, steady };

Role role_of(std::size_t index_in_attempt, int warmup_steps) {
  if (index_in_attempt == 0) return Role::compile;
  if (index_in_attempt <= static_cast<std::size_t>(std::max(0, warmup_steps))) return Role::warm_up;
  return Role::steady;
}

double finite_or_zero(double v) {
  return std::isfinite(v) ? v : 0.0;
}
double goodput_non_negative(double v) {
  return std::max(0.0, finite_or_zero(v));
}

// Moves up to `budget` seconds of `pool` into `bucket`.
void charge(double& pool, double& budget, double& bucket) {
  const double take = std::min(pool, budget);
  bucket += take;
  pool -= take;
  budget -= take;
}

}  // namespace

GoodputReport compute_goodput(double submitted_at, double finished_at,
                              const std::vector<AttemptTimeline>& attempts,
                              const GoodputOptions& options) {
  GoodputReport r;
  r.wall_seconds = goodput_non_negative(finite_or_zero(finished_at) - finite_or_zero(submitted_at));
  Badput& b = r.badput;

  // The execution of each step that counts is its last one.
  std::map<std::int64_t, std::pair<std::size_t, std::size_t>> last_execution;
  std::vector<double> steady;
  for (std::size_t a = 0; a < attempts.size(); ++a) {
    const auto& steps = attempts[a].steps;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      last_execution[steps[k].step] = {a, k};
      const double s = goodput_non_negative(steps[k].seconds);
      if (role_of(k, options.warmup_steps) == Role::steady && s > 0) steady.push_back(s);
    }
  }
  if (options.ideal_step_seconds && std::isfinite(*options.ideal_step_seconds) &&
      *options.ideal_step_seconds > 0) {
    r.ideal_step_seconds = options.ideal_step_seconds;
  } else {
    r.ideal_step_seconds = median_of(std::move(steady));
  }

  for (std::size_t a = 0; a < attempts.size(); ++a) {
    const AttemptTimeline& at = attempts[a];
    double checkpoint_left = goodput_non_negative(at.checkpoint_save_seconds.value_or(0.0));
    double data_left = goodput_non_negative(at.data_loading_seconds.value_or(0.0));
    double step_total = 0;
    for (std::size_t k = 0; k < at.steps.size(); ++k) {
      const double s = goodput_non_negative(at.steps[k].seconds);
      step_total += s;
      const Role role = role_of(k, options.warmup_steps);
      double work = 0;
      if (r.ideal_step_seconds) {
        work = std::min(s, *r.ideal_step_seconds);
      } else if (role == Role::steady) {
        work = s;
      }
      double excess = s - work;
      const bool counts = last_execution[at.steps[k].step] == std::pair{a, k};
      if (counts) {
        r.productive_seconds += work;
        ++r.productive_steps;
      } else {
        b.lost_progress += work;
        ++r.redone_step_executions;
      }
      switch (role) {
        case Role::compile:
          b.compile += excess;
          break;
        case Role::warm_up:
          b.warm_up += excess;
          break;
        case Role::steady:
          charge(excess, checkpoint_left, b.checkpoint);
          charge(excess, data_left, b.data_loading);
          b.other += excess;
          break;
      }
    }
    const double duration = goodput_non_negative(at.end - at.start);
    const double waiting = std::min(goodput_non_negative(at.waiting_for_hosts_seconds), duration);
    b.infrastructure_recovery += waiting;
    // Time in the attempt outside steps: start-up, restore, final save, teardown. Reported
    // checkpoint or data-loading time that fits neither here nor in step excess overlapped the
    // steps (asynchronous saves, prefetch) and cost nothing.
    double outside = std::max(0.0, duration - waiting - step_total);
    charge(outside, checkpoint_left, b.checkpoint);
    charge(outside, data_left, b.data_loading);
    b.other += outside;
  }

  if (attempts.empty()) {
    b.queueing = r.wall_seconds;  // never started: its whole life was queueing
  } else {
    b.queueing = goodput_non_negative(attempts.front().start - submitted_at);
    for (std::size_t a = 1; a < attempts.size(); ++a) {
      b.infrastructure_recovery += goodput_non_negative(attempts[a].start - attempts[a - 1].end);
    }
    b.other += goodput_non_negative(finished_at - attempts.back().end);
  }

  // Reconcile: consistent inputs add up to wall exactly; clamped inconsistencies show as overlap
  // (too much) or other (too little).
  const double accounted = r.productive_seconds + b.total();
  if (accounted < r.wall_seconds) {
    b.other += r.wall_seconds - accounted;
  } else {
    r.overlap_seconds = accounted - r.wall_seconds;
  }
  if (r.wall_seconds > 0) r.goodput = r.productive_seconds / r.wall_seconds;
  return r;
}

nlohmann::json to_json(const Badput& b) {
  return {{"compile", b.compile},
          {"warm_up", b.warm_up},
          {"data_loading", b.data_loading},
          {"checkpoint", b.checkpoint},
          {"lost_progress", b.lost_progress},
          {"infrastructure_recovery", b.infrastructure_recovery},
          {"queueing", b.queueing},
          {"other", b.other}};
}

nlohmann::json to_json(const GoodputReport& r) {
  return {
      {"wall_seconds", r.wall_seconds},
      {"productive_seconds", r.productive_seconds},
      {"goodput", r.goodput ? nlohmann::json(*r.goodput) : nlohmann::json(nullptr)},
      {"ideal_step_seconds",
       r.ideal_step_seconds ? nlohmann::json(*r.ideal_step_seconds) : nlohmann::json(nullptr)},
      {"productive_steps", r.productive_steps},
      {"redone_step_executions", r.redone_step_executions},
      {"overlap_seconds", r.overlap_seconds},
      {"badput", to_json(r.badput)},
  };
}

}  // namespace podium::core
