#pragma once
// LISTEN/NOTIFY on a dedicated connection (a pooled connection cannot hold LISTEN state: it is
// handed to other transactions). Used to wake the scheduler when a run is submitted and log
// streams when lines arrive.
//
//   Listener l(conninfo, {"runs"});
//   std::string channel, payload;
//   while (!stopping) {
//     if (l.wait(std::chrono::seconds(1), &channel, &payload)) rescan();  // channel "" too
//   }

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/db/database.h"

namespace podium::db {

class Connection;

class Listener {
 public:
  // Does not connect yet: the first wait() does, so a server can start while PostgreSQL is
  // still coming up.
  Listener(std::string conninfo, std::vector<std::string> channels);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Waits up to `timeout` for a notification on one of the channels. Returns true with the
  // channel and payload filled in, or false on timeout or wake(). After the connection was lost
  // and re-established it returns true once with an empty channel and payload: notifications
  // sent while it was down are gone, so the caller must re-read the state it watches.
  // When reconnecting, the call may exceed `timeout` by up to the connect timeout (2 s).
  bool wait(std::chrono::milliseconds timeout, std::string* channel, std::string* payload);

  // Makes a concurrent or the next wait() return false promptly (for shutdown). Thread-safe.
  void wake();

  bool connected() const { return conn_ != nullptr; }

  // Whether notifications are being received now: false from the moment the connection is found
  // lost, and after a reconnect until the caller came back for the next wait() (having re-read
  // what it watches after the empty notification). Thread-safe.
  bool up() const { return up_.load(); }

 private:
  bool connect();

  std::string conninfo_;
  std::vector<std::string> channels_;
  std::unique_ptr<Connection> conn_;
  int wake_fd_ = -1;  // eventfd
  bool had_connection_ = false;
  std::atomic<bool> up_{false};
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
};

// NOTIFY through a transaction: delivered when (and only if) the transaction commits.
void notify(Transaction& tx, std::string_view channel, std::string_view payload = {});

}  // namespace podium::db
