#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "backend/db/pool.h"

namespace podium::db {

Transaction::Transaction(std::unique_ptr<Lease> lease, TxMode mode) : lease_(std::move(lease)) {
  lease_->mode = mode;
  // Database::begin counts a failure here once it gives up (it retries stale connections).
  lease_->conn->exec(mode == TxMode::read_only ? "BEGIN READ ONLY" : "BEGIN", {},
                     lease_->pool->control_deadline());
}

Transaction::Transaction(Transaction&& other) noexcept
    : lease_(std::move(other.lease_)), finished_(other.finished_) {
  other.finished_ = true;
}

Transaction::~Transaction() {
  if (!lease_) return;
  if (!finished_ && !lease_->conn->broken()) {
    try {
      lease_->conn->exec("ROLLBACK", {}, lease_->pool->control_deadline());
    } catch (const DbError& e) {
      // The connection is then not idle (or broken) and the pool closes it instead of reusing.
      spdlog::warn("rollback failed, dropping the connection: {}", e.what());
    }
  }
  lease_.reset();
}

TxMode Transaction::mode() const {
  return lease_ ? lease_->mode : TxMode::read_write;
}

Result Transaction::exec(std::string_view sql, const Params& params) {
  if (!lease_ || finished_) {
    throw DbError(DbError::Kind::other, "", "statement on a finished transaction");
  }
  try {
    return lease_->conn->exec(sql, params,
                              PoolState::statement_deadline(lease_->statement_timeout));
  } catch (const DbError&) {
    lease_->pool->count_error();
    throw;
  }
}

void Transaction::exec_script(std::string_view sql) {
  if (!lease_ || finished_) {
    throw DbError(DbError::Kind::other, "", "statement on a finished transaction");
  }
  try {
    lease_->conn->exec_script(sql, PoolState::statement_deadline(lease_->statement_timeout));
  } catch (const DbError&) {
    lease_->pool->count_error();
    throw;
  }
}

void Transaction::set_statement_timeout(std::chrono::milliseconds timeout) {
  // An integer we format ourselves: SET takes no parameters.
  exec("SET LOCAL statement_timeout = " + std::to_string(std::max<int64_t>(0, timeout.count())));
  lease_->statement_timeout = timeout;
}

void Transaction::commit() {
  if (!lease_ || finished_) {
    throw DbError(DbError::Kind::other, "", "commit on a finished transaction");
  }
  // Whatever COMMIT answers, the transaction is over on the server: never ROLLBACK after it.
  finished_ = true;
  std::unique_ptr<Lease> lease = std::move(lease_);
  Result r;
  try {
    r = lease->conn->exec("COMMIT", {}, PoolState::statement_deadline(lease->statement_timeout));
  } catch (const DbError&) {
    lease->pool->count_error();
    throw;
  }
  // COMMIT of a transaction in which a statement failed (and the caller swallowed the error)
  // succeeds with tag ROLLBACK: silently losing the writes would be worse than throwing.
  if (r.command_tag() == "ROLLBACK") {
    lease->pool->count_error();
    throw DbError(DbError::Kind::other, "25P02",
                  "transaction was rolled back: a statement in it had failed");
  }
}

}  // namespace podium::db
