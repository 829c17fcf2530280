#pragma once
// When a failed delivery is tried again: exponential backoff with jitter, for a bounded time
// after the event (24 h by default), then given up. Pure: the caller passes the time and the
// random draw, so tests check exact schedules.

#include <chrono>
#include <optional>

namespace podium::notify {

struct RetryPolicy {
  std::chrono::milliseconds first_delay{std::chrono::seconds(10)};
  std::chrono::milliseconds max_delay{std::chrono::hours(1)};
  std::chrono::milliseconds give_up_after{std::chrono::hours(24)};
};

// The delay after `failed_attempts` (>= 1) failures: first_delay * 2^(failed_attempts - 1),
// at most max_delay, scaled by a jitter factor 0.5 + draw/2 with draw in [0, 1) ("equal
// jitter": never less than half the step, so retries still spread out when receivers recover).
std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int failed_attempts, double draw);

// The next attempt's time, or nullopt when it would fall after event_time + give_up_after.
std::optional<std::chrono::system_clock::time_point> next_attempt_time(
    const RetryPolicy& policy, std::chrono::system_clock::time_point event_time,
    std::chrono::system_clock::time_point now, int failed_attempts, double draw);

}  // namespace podium::notify
