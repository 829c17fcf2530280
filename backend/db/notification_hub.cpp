#include "backend/db/notification_hub.h"

#include "backend/db/listener.h"

namespace podium::db {

namespace {
// Entries older than this many generations are dropped: a waiter that old has timed out.
constexpr std::uint64_t kKeepGenerations = 100000;
}  // namespace

NotificationHub::NotificationHub(std::string conninfo, std::vector<std::string> channels)
    : listener_(std::make_unique<Listener>(std::move(conninfo), std::move(channels))) {}

NotificationHub::~NotificationHub() {
  stop();
}

void NotificationHub::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void NotificationHub::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  listener_->wake();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Observer observer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    observer = observer_;
  }
  if (observer) observer("", "");  // parked waits end and find the hub stopping
}

bool NotificationHub::stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

std::uint64_t NotificationHub::generation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return generation_;
}

bool NotificationHub::fired_locked(const std::string& channel, const std::string& key,
                                   std::uint64_t since) const {
  if (reset_generation_ > since) return true;
  for (const auto& k : {key, std::string("*")}) {
    auto it = last_.find({channel, k});
    if (it != last_.end() && it->second > since) return true;
  }
  return false;
}

bool NotificationHub::fired(const std::string& channel, const std::string& key,
                            std::uint64_t since) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_ || fired_locked(channel, key, since);
}

bool NotificationHub::fired_any(const std::string& channel, std::uint64_t since) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || reset_generation_ > since) return true;
  auto it = last_on_channel_.find(channel);
  return it != last_on_channel_.end() && it->second > since;
}

bool NotificationHub::listening() const {
  return listener_->up();
}

void NotificationHub::set_observer(Observer observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  observer_ = std::move(observer);
}

bool NotificationHub::wait(const std::string& channel, const std::string& key, std::uint64_t since,
                           std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] {
    return stopping_ || fired_locked(channel, key, since);
  }) && !stopping_;
}

bool NotificationHub::wait_any(const std::string& channel, std::uint64_t since,
                               std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] {
    if (stopping_ || reset_generation_ > since) return true;
    auto it = last_on_channel_.find(channel);
    return it != last_on_channel_.end() && it->second > since;
  }) && !stopping_;
}

void NotificationHub::publish(const std::string& channel, const std::string& key) {
  Observer observer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    observer = observer_;
    ++generation_;
    if (channel.empty())
      reset_generation_ = generation_;
    else {
      last_[{channel, key}] = generation_;
      last_on_channel_[channel] = generation_;
    }
    if (last_.size() > 10000) {
      for (auto it = last_.begin(); it != last_.end();)
        it = generation_ - it->second > kKeepGenerations / 10 ? last_.erase(it) : std::next(it);
    }
  }
  cv_.notify_all();
  if (observer) observer(channel, key);
}

void NotificationHub::loop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    std::string channel, payload;
    // A reconnect reports an empty channel: publish a reset so every waiter re-reads.
    if (listener_->wait(std::chrono::milliseconds(1000), &channel, &payload))
      publish(channel, payload);
  }
}

}  // namespace podium::db
