#include "backend/common/login_throttle.h"

#include <algorithm>

namespace podium::http {

namespace {

std::string user_key(std::string_view user) {
  return "u:" + std::string(user);
}

std::string address_key(std::string_view address) {
  return "a:" + std::string(address);
}

}  // namespace

LoginThrottle::LoginThrottle(Options options, std::function<Clock::time_point()> now)
    : options_(options), now_(std::move(now)) {}

std::chrono::seconds LoginThrottle::wait_for(const std::string& key, const Limit& limit,
                                             Clock::time_point now) {
  auto it = failures_.find(key);
  if (it == failures_.end()) return std::chrono::seconds(0);
  auto& times = it->second;
  while (!times.empty() && now - times.front() >= limit.window) times.pop_front();
  if (times.empty()) {
    failures_.erase(it);
    return std::chrono::seconds(0);
  }
  if (static_cast<int>(times.size()) < limit.max_failures) return std::chrono::seconds(0);
  // The attempt becomes possible when enough failures have aged out to be under the limit.
  const auto& gate = times[times.size() - static_cast<size_t>(limit.max_failures)];
  const auto left = limit.window - (now - gate);
  // Rounded up: a client that waits exactly Retry-After seconds must not be refused again.
  const auto secs = std::chrono::ceil<std::chrono::seconds>(left);
  return std::max(secs, std::chrono::seconds(1));
}

std::chrono::seconds LoginThrottle::retry_after(std::string_view user, std::string_view address) {
  std::lock_guard lock(mu_);
  const auto now = now_();
  auto wait = wait_for(address_key(address), options_.per_address, now);
  if (!user.empty()) wait = std::max(wait, wait_for(user_key(user), options_.per_user, now));
  return wait;
}

void LoginThrottle::add(const std::string& key, const Limit& limit, Clock::time_point now) {
  if (failures_.find(key) == failures_.end()) make_room(now);
  auto& times = failures_[key];
  times.push_back(now);
  // Only the last max_failures matter for the decision.
  while (static_cast<int>(times.size()) > std::max(limit.max_failures, 1)) times.pop_front();
}

void LoginThrottle::record_failure(std::string_view user, std::string_view address) {
  std::lock_guard lock(mu_);
  const auto now = now_();
  add(address_key(address), options_.per_address, now);
  if (!user.empty()) add(user_key(user), options_.per_user, now);
}

void LoginThrottle::record_success(std::string_view user) {
  if (user.empty()) return;
  std::lock_guard lock(mu_);
  failures_.erase(user_key(user));
}

void LoginThrottle::make_room(Clock::time_point now) {
  if (failures_.size() < options_.max_keys) return;
  const auto longest = std::max(options_.per_user.window, options_.per_address.window);
  for (auto it = failures_.begin(); it != failures_.end();) {
    if (it->second.empty() || now - it->second.back() >= longest)
      it = failures_.erase(it);
    else
      ++it;
  }
  // Still full of live keys (a spray): forget some rather than grow; the address key of the
  // sprayer is refreshed on its every attempt, so it is rarely the one forgotten for long.
  while (failures_.size() >= options_.max_keys) failures_.erase(failures_.begin());
}

size_t LoginThrottle::tracked_keys() const {
  std::lock_guard lock(mu_);
  return failures_.size();
}

}  // namespace podium::http
