#include "backend/db/listener.h"

#include <libpq-fe.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>

#include "backend/db/connection.h"
#include "backend/db/errors.h"

namespace podium::db {

Listener::Listener(std::string conninfo, std::vector<std::string> channels)
    : conninfo_(std::move(conninfo)), channels_(std::move(channels)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Listener::~Listener() {
  conn_.reset();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Listener::wake() {
  const uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable, which is all we need.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

bool Listener::connect() {
  ConnectOptions options;
  options.conninfo = conninfo_;
  options.application_name = "podium-listener";
  try {
    std::unique_ptr<Connection> c = Connection::open(options);
    for (const std::string& channel : channels_) {
      char* quoted = PQescapeIdentifier(c->native(), channel.data(), channel.size());
      if (quoted == nullptr) {
        throw DbError(DbError::Kind::other, "", PQerrorMessage(c->native()));
      }
      const std::string sql = std::string("LISTEN ") + quoted;
      PQfreemem(quoted);
      c->exec(sql, {}, Clock::now() + std::chrono::seconds(5));
    }
    conn_ = std::move(c);
    backoff_ = std::chrono::milliseconds(0);
    return true;
  } catch (const DbError& e) {
    // Back off so that a database that is down costs one attempt every few seconds, not a
    // connection storm from every waiting thread.
    backoff_ =
        std::clamp(backoff_ * 2, std::chrono::milliseconds(250), std::chrono::milliseconds(5000));
    next_attempt_ = Clock::now() + backoff_;
    spdlog::warn("LISTEN connection failed (retrying in {} ms): {}", backoff_.count(), e.what());
    return false;
  }
}

bool Listener::wait(std::chrono::milliseconds timeout, std::string* channel, std::string* payload) {
  const Clock::time_point deadline = Clock::now() + timeout;
  if (conn_) up_.store(true);
  for (;;) {
    uint64_t drained = 0;
    if (::read(wake_fd_, &drained, sizeof drained) == sizeof drained) return false;

    if (!conn_) {
      if (Clock::now() >= next_attempt_ && connect()) {
        if (had_connection_) {
          channel->clear();
          payload->clear();
          return true;
        }
        had_connection_ = true;
        up_.store(true);
        continue;
      }
      // Sleep until the next attempt or the deadline, whichever is first; wake() interrupts.
      const Clock::time_point until = std::min(deadline, next_attempt_);
      if (Clock::now() >= deadline) return false;
      wait_socket(wake_fd_, POLLIN, until);
      continue;
    }

    if (PGnotify* n = PQnotifies(conn_->native())) {
      *channel = n->relname;
      *payload = n->extra ? n->extra : "";
      PQfreemem(n);
      return true;
    }
    if (Clock::now() >= deadline) return false;

    pollfd fds[2] = {};
    fds[0].fd = PQsocket(conn_->native());
    fds[0].events = POLLIN;
    fds[1].fd = wake_fd_;
    fds[1].events = POLLIN;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const int rc = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (rc < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (rc > 0 && fds[0].revents != 0) {
      if (PQconsumeInput(conn_->native()) == 0 || conn_->broken()) {
        spdlog::warn("LISTEN connection lost: {}", single_line(PQerrorMessage(conn_->native())));
        up_.store(false);
        conn_.reset();
        next_attempt_ = Clock::now();
      }
    }
  }
}

void notify(Transaction& tx, std::string_view channel, std::string_view payload) {
  tx.exec("SELECT pg_notify($1, $2)", {std::string(channel), std::string(payload)});
}

}  // namespace podium::db
