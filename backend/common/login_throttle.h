#pragma once
// Failed sign-ins counted per username and per client address over a sliding window, so that
// guessing passwords is slow whichever of the two an attacker varies. In memory, per server
// process: each replica counts on its own (a limit of N per replica is still a limit), and a
// restart forgets, which costs an attacker a restart they cannot cause.

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace podium::http {

struct LoginLimit {
  int max_failures = 0;            // this many failures within `window` …
  std::chrono::seconds window{0};  // … refuse further attempts until the oldest one ages out
};

struct LoginThrottleOptions {
  LoginLimit per_user{5, std::chrono::seconds(60)};
  // Wider: several people may share one address (an office, a proxy).
  LoginLimit per_address{20, std::chrono::seconds(60)};
  // Keys tracked at most: a spray over millions of usernames must not grow memory without
  // bound. Beyond it, expired keys are dropped first, then arbitrary ones.
  size_t max_keys = 65536;
};

class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  using Limit = LoginLimit;
  using Options = LoginThrottleOptions;

  explicit LoginThrottle(Options options = {}, std::function<Clock::time_point()> now = Clock::now);

  // 0 when an attempt for (user, address) may go ahead, else the seconds until it may (at
  // least 1). `user` may be empty (token sign-in): then only the address counts.
  std::chrono::seconds retry_after(std::string_view user, std::string_view address);
  void record_failure(std::string_view user, std::string_view address);
  // The right password clears that user's failures (the address keeps its count: one good
  // account must not launder guesses against others from the same address).
  void record_success(std::string_view user);

  size_t tracked_keys() const;

 private:
  std::chrono::seconds wait_for(const std::string& key, const Limit& limit, Clock::time_point now);
  void add(const std::string& key, const Limit& limit, Clock::time_point now);
  void make_room(Clock::time_point now);

  const Options options_;
  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::deque<Clock::time_point>> failures_;
};

}  // namespace podium::http
