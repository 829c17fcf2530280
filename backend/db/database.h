#pragma once
// The PostgreSQL layer's interface (libpq behind it, confined to backend/db/*.cpp).
//
// Usage in a handler:
//   auto tx = db.begin();                         // ReadWrite by default
//   auto r = tx.exec("SELECT id, name FROM clusters WHERE name = $1", {name});
//   if (r.empty()) ...; r.at(0, "name") ...
//   tx.commit();                                  // destructor rolls back if not committed
//
// Every statement takes $n parameters only. Errors are thrown as DbError with a Kind derived
// from SQLSTATE; backend/api maps them to problem+json (503, 409, ...).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace podium::db {

class DbError : public std::runtime_error {
 public:
  enum class Kind {
    unavailable,       // cannot connect / connection lost / pool wait timed out  -> 503
    retryable,         // 40001 serialization failure, 40P01 deadlock             -> retried
    unique_violation,  // 23505                                                   -> 409
    foreign_key,       // 23503                                                   -> 409 / 422
    check_violation,   // 23514, 22xxx data exceptions                            -> 422
    timeout,           // 57014 statement_timeout                                 -> 503
    other              // programming errors                                      -> 500
  };
  DbError(Kind kind, std::string sqlstate, std::string message, std::string constraint = {})
      : std::runtime_error(std::move(message)),
        kind_(kind),
        sqlstate_(std::move(sqlstate)),
        constraint_(std::move(constraint)) {}
  Kind kind() const { return kind_; }
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& constraint() const { return constraint_; }

 private:
  Kind kind_;
  std::string sqlstate_;
  std::string constraint_;
};

// A parameter: text value or SQL NULL. Binary values are not used.
using Param = std::optional<std::string>;
using Params = std::vector<Param>;

class Result {
 public:
  Result();
  ~Result();
  Result(Result&&) noexcept;
  Result& operator=(Result&&) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;

  size_t size() const;
  bool empty() const { return size() == 0; }
  size_t columns() const;
  std::string column_name(size_t col) const;
  int column_index(std::string_view name) const;  // -1 if absent
  bool is_null(size_t row, std::string_view column) const;
  // Text value; empty string for NULL (use is_null / opt to tell them apart).
  std::string at(size_t row, std::string_view column) const;
  std::optional<std::string> opt(size_t row, std::string_view column) const;
  int64_t int64(size_t row, std::string_view column) const;  // 0 for NULL
  std::optional<int64_t> opt_int64(size_t row, std::string_view column) const;
  std::optional<double> opt_double(size_t row, std::string_view column) const;
  bool boolean(size_t row, std::string_view column) const;  // 't' -> true
  int64_t affected_rows() const;
  // The command tag PostgreSQL returned: "INSERT 0 1", "COMMIT", "ROLLBACK", ...
  std::string command_tag() const;

  struct Impl;
  explicit Result(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

class Connection;  // one libpq connection; owned by the pool

enum class TxMode { read_write, read_only };

// RAII transaction: rolls back in the destructor unless commit() succeeded.
class Transaction {
 public:
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();

  Result exec(std::string_view sql, const Params& params = {});
  void commit();

  // Several statements separated by ';' and no parameters (simple query protocol). For
  // migration files only: never build its text from input.
  void exec_script(std::string_view sql);
  // SET LOCAL statement_timeout for the rest of this transaction (zero: no limit), and the
  // client-side wait follows it. For migrations and the rare long report.
  void set_statement_timeout(std::chrono::milliseconds timeout);
  TxMode mode() const;

  struct Lease;  // the pooled connection this transaction holds
  explicit Transaction(std::unique_ptr<Lease> lease, TxMode mode);

 private:
  std::unique_ptr<Lease> lease_;
  bool finished_ = false;
};

struct PoolOptions {
  std::string conninfo;  // libpq connection string
  int max_connections = 16;
  // Of max_connections, how many only work under a PriorityScope may take (the server reserves
  // its heartbeat lane's: liveness must never wait for a connection behind other work, e.g.
  // status reports queued on one attempt's row lock). At least one stays open to other work.
  int reserved_for_priority = 0;
  std::chrono::milliseconds acquire_timeout{2000};  // waiting for a free connection
  std::chrono::milliseconds connect_timeout{2000};  // establishing a new connection
  std::chrono::milliseconds statement_timeout{15000};
  std::string application_name = "podium-server";
  std::chrono::milliseconds ping_timeout{1000};  // ping(): connect + SELECT 1
};

struct PoolStats {
  int in_use = 0;
  int idle = 0;
  int waiting = 0;
  uint64_t errors = 0;  // DbError thrown, all kinds
  uint64_t connections_opened = 0;
  int max_connections = 0;
};

class Database {
 public:
  explicit Database(PoolOptions options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Transaction begin(TxMode mode = TxMode::read_write);

  // Runs fn in a fresh transaction, committing after it returns; retries on Kind::retryable
  // (up to 5 times with jittered backoff). fn must be safe to run more than once.
  template <typename Fn>
  auto transact(Fn&& fn, TxMode mode = TxMode::read_write)
      -> decltype(fn(std::declval<Transaction&>()));

  // One statement as a transaction of its own (PostgreSQL's implicit one): one round trip
  // instead of BEGIN, statement, COMMIT, for hot paths whose whole transaction is one statement.
  // Only for a statement that is safe to send twice: like begin(), a reused connection that
  // turns out dead is retried on another.
  Result exec_alone(std::string_view sql, const Params& params = {});

  // SELECT 1 with a short deadline; false when the database is unreachable.
  bool ping();
  PoolStats stats() const;
  void close();  // drops idle connections, refuses new transactions
  const PoolOptions& options() const { return options_; }

  struct Pool;

 private:
  PoolOptions options_;
  std::unique_ptr<Pool> pool_;
};

// Sleeps between retries; defined in database.cpp.
void retry_backoff(int attempt);

// While one lives, transactions begun on this thread may take the pool's connections reserved
// for priority work (PoolOptions::reserved_for_priority). Nests.
class PriorityScope {
 public:
  PriorityScope();
  ~PriorityScope();
  PriorityScope(const PriorityScope&) = delete;
  PriorityScope& operator=(const PriorityScope&) = delete;
  static bool active();

 private:
  bool previous_;
};

template <typename Fn>
auto Database::transact(Fn&& fn, TxMode mode) -> decltype(fn(std::declval<Transaction&>())) {
  for (int attempt = 0;; ++attempt) {
    try {
      auto tx = begin(mode);
      if constexpr (std::is_void_v<decltype(fn(tx))>) {
        fn(tx);
        tx.commit();
        return;
      } else {
        auto value = fn(tx);
        tx.commit();
        return value;
      }
    } catch (const DbError& e) {
      if (e.kind() != DbError::Kind::retryable || attempt >= 4) throw;
      retry_backoff(attempt);
    }
  }
}

}  // namespace podium::db
