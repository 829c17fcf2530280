#pragma once
// One LISTEN connection per server process, fanned out to the threads that wait on it: the
// dispatcher (podium_runs), agent long-polls (podium_agents, payload = worker id) and live log
// followers (podium_logs, payload = run id). Replicas each have their own hub, and NOTIFY reaches
// them all, so a long-poll held by one replica wakes for work another replica dispatched.
//
// Waiting is generation-based, so a notification that arrives between reading the database and
// starting to wait is not missed:
//   auto since = hub.generation();
//   if (nothing_in_database()) hub.wait("podium_agents", worker_id, since, 25s);

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace podium::db {

class Listener;

class NotificationHub {
 public:
  NotificationHub(std::string conninfo, std::vector<std::string> channels);
  ~NotificationHub();
  NotificationHub(const NotificationHub&) = delete;
  NotificationHub& operator=(const NotificationHub&) = delete;

  void start();
  void stop();

  // The current generation; pass it to wait().
  std::uint64_t generation() const;
  // True when a notification on `channel` with payload `key` (or "*", or after a reconnect, when
  // notifications may have been missed) arrived after `since`; false on timeout or stop().
  bool wait(const std::string& channel, const std::string& key, std::uint64_t since,
            std::chrono::milliseconds timeout);

  // Same, for a notification on `channel` with any payload.
  bool wait_any(const std::string& channel, std::uint64_t since, std::chrono::milliseconds timeout);

  // Whether such a notification arrived after `since`, without waiting (stop() counts too).
  bool fired(const std::string& channel, const std::string& key, std::uint64_t since) const;
  // Same, for any payload on `channel` (a reconnect counts too).
  bool fired_any(const std::string& channel, std::uint64_t since) const;

  // Whether notifications are being received now (the LISTEN connection is up and, after a
  // reconnect, the reset it implies has been published). Thread-safe.
  bool listening() const;

  // Called on the hub's thread for every notification (channel "" after a reconnect, when any
  // may have been missed, and once at stop()): how waits parked outside the hub (the HTTP
  // layer's) are woken. Thread-safe; {} removes it.
  using Observer = std::function<void(const std::string& channel, const std::string& key)>;
  void set_observer(Observer observer);

  // True once stop() was called: long waits should give up.
  bool stopping() const;

  // For tests and for in-process wakeups (the sender's own replica): as if NOTIFY arrived.
  void publish(const std::string& channel, const std::string& key);

 private:
  void loop();
  bool fired_locked(const std::string& channel, const std::string& key, std::uint64_t since) const;

  std::unique_ptr<Listener> listener_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t generation_ = 0;
  std::uint64_t reset_generation_ = 0;  // last reconnect: everything may have changed
  std::map<std::pair<std::string, std::string>, std::uint64_t> last_;
  std::map<std::string, std::uint64_t> last_on_channel_;
  bool stopping_ = false;
  Observer observer_;
  std::thread thread_;
};

}  // namespace podium::db
