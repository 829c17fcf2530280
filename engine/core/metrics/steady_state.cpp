#include "engine/core/metrics/steady_state.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

namespace podium::core {
namespace {

// Scales MAD to the standard deviation of a normal distribution.
constexpr double kMadToSigma = 1.4826;

nlohmann::json steady_optional_number(const std::optional<double>& v) {
  return (v && std::isfinite(*v)) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> median_of_finite(const std::vector<std::optional<double>>& values) {
  std::vector<double> finite;
  finite.reserve(values.size());
  for (const auto& v : values) {
    if (v && std::isfinite(*v)) finite.push_back(*v);
  }
  return median_of(std::move(finite));
}

}  // namespace

std::string_view to_string(ExclusionReason r) {
  switch (r) {
    case ExclusionReason::invalid:
      return "invalid";
    case ExclusionReason::compile:
      return "compile";
    case ExclusionReason::warm_up:
      return "warm_up";
    case ExclusionReason::data_exhausted:
      return "data_exhausted";
    case ExclusionReason::dispatch_artifact:
      return "dispatch_artifact";
    case ExclusionReason::outlier:
      return "outlier";
  }
  return "outlier";
}

std::optional<double> median_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
}

SteadyState compute_steady_state(const std::vector<StepSample>& samples,
                                 const SteadyStateOptions& options) {
  SteadyState out;
  std::map<std::int64_t, StepSample> by_step;
  for (const StepSample& s : samples) by_step[s.step] = s;
  std::vector<StepSample> v;
  v.reserve(by_step.size());
  for (auto& [step, sample] : by_step) v.push_back(sample);
  out.samples = v.size();
  if (v.empty()) return out;

  std::vector<std::optional<ExclusionReason>> reason(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i].seconds) || v[i].seconds <= 0) reason[i] = ExclusionReason::invalid;
  }

  // Compile and warm-up, once per process start.
  std::vector<std::size_t> starts = {0};
  for (std::int64_t first : options.attempt_start_steps) {
    auto it =
        std::lower_bound(v.begin(), v.end(), first,
                         [](const StepSample& s, std::int64_t step) { return s.step < step; });
    if (it != v.end()) starts.push_back(static_cast<std::size_t>(it - v.begin()));
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t start = starts[k];
    const std::size_t segment_end = k + 1 < starts.size() ? starts[k + 1] : v.size();
    if (!reason[start]) reason[start] = ExclusionReason::compile;
    const std::size_t warm = static_cast<std::size_t>(std::max(0, options.warmup_steps));
    for (std::size_t i = start + 1; i < segment_end && i <= start + warm; ++i) {
      if (!reason[i]) reason[i] = ExclusionReason::warm_up;
    }
  }
  if (options.last_step_data_exhausted && !reason.back()) {
    reason.back() = ExclusionReason::data_exhausted;
  }

  auto candidate_seconds = [&]() {
    std::vector<double> secs;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!reason[i]) secs.push_back(v[i].seconds);
    }
    return secs;
  };

  // Dispatch artefacts, judged against the median of the candidates.
  if (auto m0 = median_of(candidate_seconds())) {
    for (std::size_t i = 0; i + 1 < v.size(); ++i) {
      if (reason[i] || reason[i + 1] || v[i + 1].step != v[i].step + 1) continue;
      if (v[i].seconds < options.dispatch_fast_fraction * *m0 &&
          v[i + 1].seconds > options.dispatch_slow_fraction * *m0) {
        reason[i] = ExclusionReason::dispatch_artifact;
        reason[i + 1] = ExclusionReason::dispatch_artifact;
        ++i;
      }
    }
  }

  // Median ± threshold × scaled MAD.
  const std::vector<double> remaining = candidate_seconds();
  if (auto m = median_of(remaining)) {
    std::vector<double> deviations;
    deviations.reserve(remaining.size());
    for (double s : remaining) deviations.push_back(std::fabs(s - *m));
    const double scaled_mad = kMadToSigma * median_of(std::move(deviations)).value_or(0.0);
    const double spread = std::max(scaled_mad, options.mad_floor_fraction * std::fabs(*m));
    const double half = options.mad_threshold * spread;
    out.scaled_mad_seconds = scaled_mad;
    out.lower_bound_seconds = *m - half;
    out.upper_bound_seconds = *m + half;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (reason[i]) continue;
      if (v[i].seconds < *m - half || v[i].seconds > *m + half) {
        reason[i] = ExclusionReason::outlier;
      }
    }
  }

  std::vector<double> kept_secs;
  std::vector<std::optional<double>> kept_tflops;
  std::vector<std::optional<double>> kept_tokens;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (reason[i]) {
      out.excluded.push_back(ExcludedStep{v[i].step, v[i].seconds, *reason[i]});
      continue;
    }
    kept_secs.push_back(v[i].seconds);
    kept_tflops.push_back(v[i].tflops_per_device);
    kept_tokens.push_back(v[i].tokens_per_second_per_device);
    if (!out.kept_ranges.empty() && out.kept_ranges.back().last + 1 == v[i].step) {
      out.kept_ranges.back().last = v[i].step;
    } else {
      out.kept_ranges.push_back(StepRange{v[i].step, v[i].step});
    }
  }
  out.kept_count = kept_secs.size();
  if (kept_secs.empty()) return out;

  out.median_seconds = median_of(kept_secs);
  out.mean_seconds = std::accumulate(kept_secs.begin(), kept_secs.end(), 0.0) /
                     static_cast<double>(kept_secs.size());
  out.min_seconds = *std::min_element(kept_secs.begin(), kept_secs.end());
  out.max_seconds = *std::max_element(kept_secs.begin(), kept_secs.end());

  out.tflops_per_device = median_of_finite(kept_tflops);
  if (!out.tflops_per_device && options.tflops_per_step_per_device) {
    out.tflops_per_device = *options.tflops_per_step_per_device / *out.median_seconds;
  }
  out.tokens_per_second_per_device = median_of_finite(kept_tokens);
  if (!out.tokens_per_second_per_device && options.tokens_per_step_per_device) {
    out.tokens_per_second_per_device = *options.tokens_per_step_per_device / *out.median_seconds;
  }
  if (out.tflops_per_device && options.peak_tflops_per_device &&
      *options.peak_tflops_per_device > 0) {
    out.mfu = *out.tflops_per_device / *options.peak_tflops_per_device;
  }
  return out;
}

nlohmann::json to_json(const SteadyState& s) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const StepRange& r : s.kept_ranges) ranges.push_back({r.first, r.last});
  nlohmann::json excluded = nlohmann::json::array();
  nlohmann::json counts = nlohmann::json::object();
  for (const ExcludedStep& e : s.excluded) {
    const std::string reason(to_string(e.reason));
    excluded.push_back({{"step", e.step},
                        {"seconds", std::isfinite(e.seconds) ? nlohmann::json(e.seconds) : nullptr},
                        {"reason", reason}});
    counts[reason] = counts.value(reason, 0) + 1;
  }
  nlohmann::json band = nullptr;
  if (s.lower_bound_seconds && s.upper_bound_seconds) {
    band = {steady_optional_number(s.lower_bound_seconds),
            steady_optional_number(s.upper_bound_seconds)};
  }
  return {
      {"samples", s.samples},
      {"kept_count", s.kept_count},
      {"kept_ranges", std::move(ranges)},
      {"median_seconds", steady_optional_number(s.median_seconds)},
      {"mean_seconds", steady_optional_number(s.mean_seconds)},
      {"min_seconds", steady_optional_number(s.min_seconds)},
      {"max_seconds", steady_optional_number(s.max_seconds)},
      {"scaled_mad_seconds", steady_optional_number(s.scaled_mad_seconds)},
      {"band", std::move(band)},
      {"tflops_per_device", steady_optional_number(s.tflops_per_device)},
      {"tokens_per_second_per_device", steady_optional_number(s.tokens_per_second_per_device)},
      {"mfu", steady_optional_number(s.mfu)},
      {"excluded", std::move(excluded)},
      {"excluded_counts", std::move(counts)},
  };
}

}  // namespace podium::core
