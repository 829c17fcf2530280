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

namespace {

// Runs `use` on a pooled connection. An idle connection may have died since it was last used
// (server restart) without the pool noticing; `use` is then run again on another connection,
// so it must be safe to repeat (BEGIN is; exec_alone's callers promise it). A freshly opened
// connection failing is reported: the server is really gone.
template <typename Use>
auto on_live_connection(PoolState& pool, Clock::time_point deadline, int max_tries, Use&& use) {
  for (int attempt = 0;; ++attempt) {
    PoolState::Acquired a;
    try {
      a = pool.acquire(deadline);
    } catch (const DbError&) {
      pool.count_error();
      throw;
    }
    const bool reused = a.reused;
    try {
      return use(std::move(a.conn));
    } catch (const DbError& e) {
      if (!reused || e.kind() != DbError::Kind::unavailable || attempt > max_tries) {
        pool.count_error();
        throw;
      }
    }
  }
}

}  // namespace

Transaction Database::begin(TxMode mode) {
  return on_live_connection(
      *pool_->state, Clock::now() + options_.acquire_timeout, options_.max_connections,
      [&](std::unique_ptr<Connection> conn) {
        return Transaction(std::make_unique<Transaction::Lease>(pool_->state, std::move(conn)),
                           mode);
      });
}

Result Database::exec_alone(std::string_view sql, const Params& params) {
  return on_live_connection(
      *pool_->state, Clock::now() + options_.acquire_timeout, options_.max_connections,
      [&](std::unique_ptr<Connection> conn) {
        Transaction::Lease lease(pool_->state, std::move(conn));  // back to the pool at the end
        return lease.conn->exec(sql, params,
                                PoolState::statement_deadline(lease.statement_timeout));
      });
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
