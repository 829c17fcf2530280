#pragma once
// Robust steady-state step time and throughput (domain brief §2.4). Pure: no I/O.
//
// The rule, in order:
//  1. Invalid samples (seconds not finite or <= 0) are excluded.
//  2. The first step of each process is XLA compilation: the first sample, and the first sample at
//     or after each entry of attempt_start_steps (a restart compiles again).
//  3. The next warmup_steps samples after each compile step are warm-up (default 2).
//  4. When the run ended by running out of data, its final step is excluded (it waits on an empty
//     iterator and is slow).
//  5. Asynchronous-dispatch artefacts: a step under dispatch_fast_fraction × median (default
//     0.25) immediately followed (step + 1) by one over dispatch_slow_fraction × median (default
//     1.5) is a pair where the host returned early and the next step paid for both. Both steps
//     are excluded rather than averaged: the pair's mean is close to a real step, but keeping two
//     values that are each wrong would widen the MAD band for every other step, and the figure
//     should rest only on steps that were measured as they ran.
//  6. Of the rest, keep steps within median ± mad_threshold × scaled MAD (1.4826 × MAD, the
//     normal-consistent scale; Google's goodput library uses median + 3·MAD on raw step times).
//     When MAD is 0 (more than half the steps identical, typical of rounded logs) the band uses a
//     floor of mad_floor_fraction × median (default 1%) so that a step 0.1% off is not an
//     "outlier".
// The result reports the median and mean of kept steps, how many steps it rests on (count and
// contiguous ranges), and every excluded step with its reason.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct StepSample {
  std::int64_t step = 0;
  double seconds = 0;
  std::optional<double> tflops_per_device;             // TFLOP/s/device as logged
  std::optional<double> tokens_per_second_per_device;  // Tokens/s/device as logged
};

struct SteadyStateOptions {
  int warmup_steps = 2;
  bool last_step_data_exhausted = false;
  std::vector<std::int64_t> attempt_start_steps;  // first step of each restart's process
  double mad_threshold = 3.0;
  double mad_floor_fraction = 0.01;
  double dispatch_fast_fraction = 0.25;
  double dispatch_slow_fraction = 1.5;
  // Per-device peak TFLOP/s (accelerator catalog, per *device*: tpu7x is half a chip). MFU is
  // reported only when this is set and positive.
  std::optional<double> peak_tflops_per_device;
  // Model TFLOPs per step per device (MaxText's "Total TFLOPs"); used to derive TFLOP/s when the
  // steps carry none (rampup, other workloads).
  std::optional<double> tflops_per_step_per_device;
  // Tokens per step per device; used to derive tokens/s when the steps carry none.
  std::optional<double> tokens_per_step_per_device;
};

enum class ExclusionReason {
  invalid,
  compile,
  warm_up,
  data_exhausted,
  dispatch_artifact,
  outlier
};
std::string_view to_string(ExclusionReason r);

struct ExcludedStep {
  std::int64_t step = 0;
  double seconds = 0;
  ExclusionReason reason = ExclusionReason::outlier;
};

struct StepRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

struct SteadyState {
  std::size_t samples = 0;     // distinct steps considered
  std::size_t kept_count = 0;  // steps the figures rest on
  std::vector<StepRange> kept_ranges;
  std::vector<ExcludedStep> excluded;  // by step
  std::optional<double> median_seconds;
  std::optional<double> mean_seconds;
  std::optional<double> min_seconds;
  std::optional<double> max_seconds;
  std::optional<double> scaled_mad_seconds;
  std::optional<double> lower_bound_seconds;  // the band kept steps fall in
  std::optional<double> upper_bound_seconds;
  std::optional<double> tflops_per_device;             // TFLOP/s/device, median over kept steps
  std::optional<double> tokens_per_second_per_device;  // median over kept steps
  std::optional<double> mfu;                           // tflops_per_device / peak per device
};

// Samples in any order; a step given twice keeps its later sample (the run redid it).
SteadyState compute_steady_state(const std::vector<StepSample>& samples,
                                 const SteadyStateOptions& options = {});

// Median of values (empty -> nullopt). Exposed because summaries use the same statistic.
std::optional<double> median_of(std::vector<double> values);

// {"samples","kept_count","kept_ranges":[[first,last],...],"median_seconds","mean_seconds",
//  "min_seconds","max_seconds","scaled_mad_seconds","band":[lo,hi]|null,"tflops_per_device",
//  "tokens_per_second_per_device","mfu","excluded":[{"step","seconds","reason"}],
//  "excluded_counts":{"compile":n,...}}
nlohmann::json to_json(const SteadyState& s);

}  // namespace podium::core
