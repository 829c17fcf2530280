#include "backend/notify/retry_schedule.h"

#include <algorithm>
#include <cmath>

namespace podium::notify {

std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int failed_attempts, double draw) {
  const int exponent = std::clamp(failed_attempts - 1, 0, 40);
  const double step =
      std::min(static_cast<double>(policy.first_delay.count()) * std::ldexp(1.0, exponent),
               static_cast<double>(policy.max_delay.count()));
  const double jitter = 0.5 + std::clamp(draw, 0.0, 1.0) / 2.0;
  return std::chrono::milliseconds(static_cast<long long>(std::llround(step * jitter)));
}

std::optional<std::chrono::system_clock::time_point> next_attempt_time(
    const RetryPolicy& policy, std::chrono::system_clock::time_point event_time,
    std::chrono::system_clock::time_point now, int failed_attempts, double draw) {
  const auto next = now + retry_delay(policy, failed_attempts, draw);
  if (next > event_time + policy.give_up_after) return std::nullopt;
  return next;
}

}  // namespace podium::notify
