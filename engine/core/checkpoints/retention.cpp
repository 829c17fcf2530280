#include "engine/core/checkpoints/retention.h"

#include <algorithm>

namespace podium::core {

std::optional<CheckpointRetention> effective_retention(
    const std::optional<CheckpointRetention>& run,
    const std::optional<CheckpointRetention>& cluster) {
  return run ? run : cluster;
}

std::vector<std::int64_t> checkpoints_to_delete(const std::vector<std::int64_t>& finished,
                                                const std::optional<CheckpointRetention>& policy,
                                                const std::set<std::int64_t>& protected_steps) {
  if (!policy || (!policy->keep_last && !policy->keep_every) || finished.empty()) return {};
  std::vector<std::int64_t> steps = finished;
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  // Index of the first step inside the last-N window; the latest is always inside.
  const auto count = static_cast<std::int64_t>(steps.size());
  const std::int64_t last_n = policy->keep_last.value_or(0);
  const std::int64_t window_start =
      std::max<std::int64_t>(0, count - std::max<std::int64_t>(last_n, 1));
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t step = steps[static_cast<size_t>(i)];
    if (i >= window_start) continue;  // among the last N, or the latest
    if (policy->keep_every && step % *policy->keep_every == 0) continue;
    if (protected_steps.contains(step)) continue;
    out.push_back(step);
  }
  return out;
}

}  // namespace podium::core
