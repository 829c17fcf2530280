#pragma once
// The pool's shared state. Transactions hold a shared_ptr to it, so a Transaction that
// outlives its Database returns (or drops) its connection safely instead of touching freed
// memory.

#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <vector>

#include "backend/db/connection.h"
#include "backend/db/database.h"

namespace podium::db {

class PoolState {
 public:
  explicit PoolState(PoolOptions options);

  struct Acquired {
    std::unique_ptr<Connection> conn;
    bool reused = false;  // came from the idle list (may have died since it was used)
  };
  // A healthy idle connection, or a new one while fewer than max_connections exist, or waits
  // for one to be released until `deadline`. Throws DbError(unavailable).
  // Waiters are served first come, first served (priority waiters before the others): a
  // caller arriving while others wait queues behind them instead of taking the slot a release
  // just freed for the oldest waiter. Without that, under load a few unlucky requests waited
  // up to the acquire timeout while newer ones went through (the p99 of bench/limits.py's
  // api_get_run).
  Acquired acquire(Clock::time_point deadline);
  // Back to the idle list when reusable; otherwise closed. A connection that failed at the
  // transport level also closes the idle ones: they lead to the same server and are very
  // likely dead too, and testing them one request at a time would fail requests needlessly.
  void release(std::unique_ptr<Connection> conn);
  void close();
  bool ping();
  PoolStats stats() const;

  void count_error() { errors_.fetch_add(1, std::memory_order_relaxed); }
  const PoolOptions& options() const { return options_; }
  // Deadline for BEGIN / ROLLBACK: they are instant on a healthy server, so a long wait means
  // the server is unresponsive.
  Clock::time_point control_deadline() const;
  // Deadline for a statement under a given statement_timeout (zero: none): the server cancels
  // at the timeout; the margin covers the round trip and the cancellation itself.
  static Clock::time_point statement_deadline(std::chrono::milliseconds statement_timeout);

 private:
  ConnectOptions connect_options() const;

  // A caller of acquire() waiting for a slot; lives on that caller's stack while queued.
  struct Waiter {
    std::condition_variable cv;
  };
  using WaitQueue = std::list<Waiter*>;

  // Wakes the waiter next in line (the oldest priority one, else the oldest other one): called
  // whenever a slot may have become free. The woken waiter, once it has taken its slot, calls
  // this again, so several slots freed at once reach as many waiters.
  void wake_next_locked();
  // Leaves a queue taken by `self`; wakes the next waiter so a wake-up meant for `self` that it
  // did not use (timeout, close) is not lost.
  void leave_queue_locked(WaitQueue& queue, WaitQueue::iterator self);

  const PoolOptions options_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int in_use_ = 0;              // leased plus being opened
  WaitQueue priority_waiters_;  // under a PriorityScope, served before the others
  WaitQueue waiters_;
  bool closed_ = false;
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> opened_{0};

  std::mutex ping_mu_;
  std::unique_ptr<Connection> ping_conn_;  // outside the pool: readiness must not queue
};

struct Database::Pool {
  std::shared_ptr<PoolState> state;
};

struct Transaction::Lease {
  Lease(std::shared_ptr<PoolState> p, std::unique_ptr<Connection> c)
      : pool(std::move(p)),
        conn(std::move(c)),
        statement_timeout(pool->options().statement_timeout) {}
  ~Lease() { pool->release(std::move(conn)); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  std::shared_ptr<PoolState> pool;
  std::unique_ptr<Connection> conn;
  TxMode mode = TxMode::read_write;
  std::chrono::milliseconds statement_timeout;
};

}  // namespace podium::db
