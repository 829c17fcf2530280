#pragma once
// Time behind an interface: the supervisor's decisions (when to escalate a cancel to SIGKILL,
// when a log batch is due, when to scan for checkpoints) take "now" from a Clock so that tests
// drive them with a fake one. Blocking waits use real time; only decisions use the Clock.

#include <algorithm>
#include <chrono>

namespace podium::worker {

using TimePoint = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// Exponential backoff: 0.5 s doubling to 10 s by default; reset() after a success.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial = std::chrono::milliseconds(500),
          std::chrono::milliseconds max = std::chrono::milliseconds(10000))
      : initial_(initial), max_(max), next_(initial) {}
  std::chrono::milliseconds next() {
    const auto d = next_;
    next_ = std::min(max_, next_ * 2);
    return d;
  }
  void reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds next_;
};

}  // namespace podium::worker
