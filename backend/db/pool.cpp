#include "backend/db/pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

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

void PoolState::wake_next_locked() {
  if (!priority_waiters_.empty()) {
    priority_waiters_.front()->cv.notify_one();
  } else if (!waiters_.empty()) {
    waiters_.front()->cv.notify_one();
  }
}

void PoolState::leave_queue_locked(WaitQueue& queue, WaitQueue::iterator self) {
  queue.erase(self);
  wake_next_locked();
}

PoolState::Acquired PoolState::acquire(Clock::time_point deadline) {
  std::vector<std::unique_ptr<Connection>> dead;  // closed after the lock is released
  const bool priority = PriorityScope::active();
  // Other work leaves the reserved connections to priority work (at least one slot is its own).
  const int limit =
      priority
          ? options_.max_connections
          : std::max(1, options_.max_connections - std::max(0, options_.reserved_for_priority));
  WaitQueue& queue = priority ? priority_waiters_ : waiters_;
  Waiter self;
  std::optional<WaitQueue::iterator> queued;  // where `self` stands in `queue`, once it waits
  std::unique_lock lock(mu_);
  for (;;) {
    if (closed_) {
      if (queued) leave_queue_locked(queue, *queued);
      throw DbError(DbError::Kind::unavailable, "", "database pool is closed");
    }
    // First come, first served: a caller may take a slot only when nobody it must not pass
    // is waiting (priority waiters pass the others, never the reverse).
    const bool first_in_line = queued ? queue.front() == &self : queue.empty();
    const bool turn = first_in_line && (priority || priority_waiters_.empty());
    if (turn && in_use_ < limit) {
      if (queued) {
        queue.erase(*queued);
        queued.reset();
      }
      // Most recently used first: it is the likeliest to be warm and alive.
      std::unique_ptr<Connection> reused;
      while (!idle_.empty() && !reused) {
        std::unique_ptr<Connection> c = std::move(idle_.back());
        idle_.pop_back();
        if (c->check_idle()) {
          reused = std::move(c);
        } else {
          dead.push_back(std::move(c));
        }
      }
      ++in_use_;
      // Another slot may be free too (several released at once): pass the turn on.
      if (in_use_ < options_.max_connections) wake_next_locked();
      lock.unlock();
      dead.clear();
      if (reused) return {std::move(reused), true};
      try {
        std::unique_ptr<Connection> c = Connection::open(connect_options());
        opened_.fetch_add(1, std::memory_order_relaxed);
        return {std::move(c), false};
      } catch (...) {
        lock.lock();
        --in_use_;
        wake_next_locked();
        throw;
      }
    }
    if (!queued) queued = queue.insert(queue.end(), &self);
    if (self.cv.wait_until(lock, deadline) == std::cv_status::timeout && Clock::now() >= deadline) {
      leave_queue_locked(queue, *queued);
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
    wake_next_locked();
  }
  // PQfinish outside the lock: it may write a Terminate message to the socket.
}

void PoolState::close() {
  std::vector<std::unique_ptr<Connection>> dead;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dead = std::move(idle_);
    for (Waiter* w : priority_waiters_) w->cv.notify_one();
    for (Waiter* w : waiters_) w->cv.notify_one();
  }
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
  s.waiting = static_cast<int>(priority_waiters_.size() + waiters_.size());
  s.errors = errors_.load(std::memory_order_relaxed);
  s.connections_opened = opened_.load(std::memory_order_relaxed);
  s.max_connections = options_.max_connections;
  return s;
}

}  // namespace podium::db
