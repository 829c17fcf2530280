#include "backend/db/pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace podium::db {

PoolState::PoolState(PoolOptions options) : options_(std::move(options)) {}

ConnectOptions PoolState::connect_options() const {
  ConnectOptions c;
  c.conninfo = options_.conninfo;
  c.connect_timeout = options_.connect_timeout;
  c.statement_timeout = options_.statement_timeout;
  c.application_name = options_.application_name;
  return c;
}

Clock::time_point PoolState::control_deadline() const {
  return Clock::now() + std::max<std::chrono::milliseconds>(options_.connect_timeout,
                                                            std::chrono::milliseconds(3000));
}

Clock::time_point PoolState::statement_deadline(std::chrono::milliseconds statement_timeout) {
  if (statement_timeout.count() <= 0) return Clock::time_point::max();
  return Clock::now() + statement_timeout + std::chrono::seconds(5);
}

namespace {
thread_local bool priority_thread = false;
}  // namespace

PriorityScope::PriorityScope() : previous_(priority_thread) {
  priority_thread = true;
}

PriorityScope::~PriorityScope() {
  priority_thread = previous_;
}

bool PriorityScope::active() {
  return priority_thread;
}

void PoolState::notify_one_locked() {
  // Both: a priority waiter may use any slot, another waiter only one below its limit (woken
  // for a reserved slot, it waits again); waking only the first could strand the second.
  if (priority_waiting_ > 0) priority_cv_.notify_one();
  cv_.notify_one();
}

PoolState::Acquired PoolState::acquire(Clock::time_point deadline) {
  std::vector<std::unique_ptr<Connection>> dead;  // closed after the lock is released
  const bool priority = PriorityScope::active();
  // Other work leaves the reserved connections to priority work (at least one slot is its own).
  const int limit =
      priority
          ? options_.max_connections
          : std::max(1, options_.max_connections - std::max(0, options_.reserved_for_priority));
  std::unique_lock lock(mu_);
  for (;;) {
    if (closed_) throw DbError(DbError::Kind::unavailable, "", "database pool is closed");
    // Most recently used first: it is the likeliest to be warm and alive.
    while (in_use_ < limit && !idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      if (c->check_idle()) {
        ++in_use_;
        lock.unlock();
        dead.clear();
        return {std::move(c), true};
      }
      dead.push_back(std::move(c));
    }
    if (in_use_ < limit) {
      ++in_use_;
      lock.unlock();
      dead.clear();
      try {
        std::unique_ptr<Connection> c = Connection::open(connect_options());
        opened_.fetch_add(1, std::memory_order_relaxed);
        return {std::move(c), false};
      } catch (...) {
        lock.lock();
        --in_use_;
        notify_one_locked();
        throw;
      }
    }
    ++waiting_;
    if (priority) ++priority_waiting_;
    const bool woken =
        (priority ? priority_cv_ : cv_).wait_until(lock, deadline) == std::cv_status::no_timeout;
    if (priority) --priority_waiting_;
    --waiting_;
    if (!woken && Clock::now() >= deadline) {
      throw DbError(DbError::Kind::unavailable, "",
                    "no free database connection within " +
                        std::to_string(options_.acquire_timeout.count()) + " ms (all " +
                        std::to_string(options_.max_connections) + " in use)");
    }
  }
}

void PoolState::release(std::unique_ptr<Connection> conn) {
  std::vector<std::unique_ptr<Connection>> dead;
  {
    std::lock_guard lock(mu_);
    --in_use_;
    if (!conn) {
      // Nothing to keep; the slot is free again.
    } else if (!closed_ && conn->reusable()) {
      idle_.push_back(std::move(conn));
    } else {
      if (conn->broken()) dead = std::move(idle_);
      dead.push_back(std::move(conn));
    }
    notify_one_locked();
  }
  // PQfinish outside the lock: it may write a Terminate message to the socket.
}

void PoolState::close() {
  std::vector<std::unique_ptr<Connection>> dead;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dead = std::move(idle_);
  }
  cv_.notify_all();
  priority_cv_.notify_all();
  std::lock_guard lock(ping_mu_);
  ping_conn_.reset();
}

bool PoolState::ping() {
  std::lock_guard lock(ping_mu_);
  {
    std::lock_guard pool_lock(mu_);
    if (closed_) return false;
  }
  const Clock::time_point deadline = Clock::now() + options_.ping_timeout;
  try {
    if (ping_conn_ && !ping_conn_->check_idle()) ping_conn_.reset();
    if (!ping_conn_) {
      ConnectOptions c = connect_options();
      c.connect_timeout = std::min(c.connect_timeout, options_.ping_timeout);
      ping_conn_ = Connection::open(c, deadline);
    }
    Result r = ping_conn_->exec("SELECT 1", {}, deadline);
    return r.size() == 1;
  } catch (const DbError& e) {
    spdlog::debug("database ping failed: {}", e.what());
    ping_conn_.reset();
    return false;
  }
}

PoolStats PoolState::stats() const {
  PoolStats s;
  std::lock_guard lock(mu_);
  s.in_use = in_use_;
  s.idle = static_cast<int>(idle_.size());
  s.waiting = waiting_;
  s.errors = errors_.load(std::memory_order_relaxed);
  s.connections_opened = opened_.load(std::memory_order_relaxed);
  s.max_connections = options_.max_connections;
  return s;
}

}  // namespace podium::db
