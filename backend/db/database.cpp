#include "backend/db/database.h"

#include <random>
#include <stdexcept>
#include <thread>

#include "backend/db/conninfo.h"
#include "backend/db/pool.h"
#include "backend/db/result_impl.h"

namespace podium::db {

std::string Result::command_tag() const {
  return impl_ ? PQcmdStatus(impl_->res) : "";
}

Database::Database(PoolOptions options) : options_(std::move(options)) {
  validate_conninfo(options_.conninfo);
  if (options_.max_connections < 1) throw std::invalid_argument("max_connections must be >= 1");
  pool_ = std::make_unique<Pool>();
  pool_->state = std::make_shared<PoolState>(options_);
}

Database::~Database() {
  close();
}

Transaction Database::begin(TxMode mode) {
  const Clock::time_point deadline = Clock::now() + options_.acquire_timeout;
  // An idle connection may have died since it was last used (server restart) without the
  // pool noticing; BEGIN is side-effect free, so such a failure is retried on another
  // connection. A freshly opened connection failing is reported: the server is really gone.
  for (int attempt = 0;; ++attempt) {
    PoolState::Acquired a;
    try {
      a = pool_->state->acquire(deadline);
    } catch (const DbError&) {
      pool_->state->count_error();
      throw;
    }
    const bool reused = a.reused;
    try {
      return Transaction(std::make_unique<Transaction::Lease>(pool_->state, std::move(a.conn)),
                         mode);
    } catch (const DbError& e) {
      if (!reused || e.kind() != DbError::Kind::unavailable || attempt > options_.max_connections) {
        pool_->state->count_error();
        throw;
      }
    }
  }
}

Result Database::exec_alone(std::string_view sql, const Params& params) {
  const Clock::time_point deadline = Clock::now() + options_.acquire_timeout;
  for (int attempt = 0;; ++attempt) {
    PoolState::Acquired a;
    try {
      a = pool_->state->acquire(deadline);
    } catch (const DbError&) {
      pool_->state->count_error();
      throw;
    }
    const bool reused = a.reused;
    Transaction::Lease lease(pool_->state, std::move(a.conn));  // back to the pool at the end
    try {
      return lease.conn->exec(sql, params, PoolState::statement_deadline(lease.statement_timeout));
    } catch (const DbError& e) {
      if (!reused || e.kind() != DbError::Kind::unavailable || attempt > options_.max_connections) {
        pool_->state->count_error();
        throw;
      }
    }
  }
}

bool Database::ping() {
  return pool_->state->ping();
}

PoolStats Database::stats() const {
  return pool_->state->stats();
}

void Database::close() {
  if (pool_) pool_->state->close();
}

void retry_backoff(int attempt) {
  // Exponential with full jitter, so that the transactions that collided do not collide again.
  thread_local std::mt19937 rng{std::random_device{}()};
  const int capped = std::min(attempt, 5);
  const int ceiling_ms = 10 << capped;  // 10, 20, 40, 80, 160, 320 ms
  std::uniform_int_distribution<int> pick(ceiling_ms / 4, ceiling_ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(pick(rng)));
}

}  // namespace podium::db
