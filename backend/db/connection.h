#pragma once
// One libpq connection driven through libpq's asynchronous API, so that every wait (connect,
// statement, result) has a client-side deadline: a PostgreSQL that stops answering costs a
// request at most its deadline, never a TCP timeout of minutes.
//
// Used by the pool, the LISTEN helper, migrations' tests and the embedded PostgreSQL's
// bootstrap; handlers go through Database/Transaction instead.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "backend/db/database.h"

struct pg_conn;  // PGconn, kept out of this header

namespace podium::db {

using Clock = std::chrono::steady_clock;

struct ConnectOptions {
  std::string conninfo;
  std::chrono::milliseconds connect_timeout{2000};
  // Sent as SET statement_timeout right after connecting; zero disables it.
  std::chrono::milliseconds statement_timeout{0};
  std::string application_name = "podium";
};

class Connection {
 public:
  // Throws DbError(unavailable) when no session is established before the deadline (the
  // earlier of `deadline` and now + connect_timeout).
  static std::unique_ptr<Connection> open(const ConnectOptions& options,
                                          Clock::time_point deadline = Clock::time_point::max());
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One statement with $n text parameters. Throws DbError; when the failure is at the transport
  // level (connection lost, no answer before the deadline) broken() becomes true.
  // SELECT/INSERT/UPDATE/DELETE/WITH statements are prepared on first use and their prepared
  // form reused by text (up to kMaxPrepared per connection, then sent unprepared): parsing and
  // planning the agent plane's short statements anew each time was most of the database's work.
  Result exec(std::string_view sql, const Params& params, Clock::time_point deadline);
  static constexpr size_t kMaxPrepared = 200;
  size_t prepared_count() const { return prepared_.size(); }
  // Several statements without parameters (simple query protocol), for migration files.
  void exec_script(std::string_view sql, Clock::time_point deadline);

  // A transport failure was seen or libpq reports the connection bad: never reuse it.
  bool broken() const;
  // True when the connection can go back to the pool: healthy and outside any transaction.
  bool reusable() const;
  // For a connection that sat idle in the pool: reads whatever the server sent meanwhile
  // (a shutdown notice, EOF) without blocking and says whether the connection is still usable.
  bool check_idle();

  pg_conn* native() const { return conn_; }

 private:
  explicit Connection(pg_conn* conn) : conn_(conn) {}
  Result collect(Clock::time_point deadline);
  void flush(Clock::time_point deadline);
  [[noreturn]] void fail_transport(const std::string& what);

  // The prepared form's name for this statement text, preparing it now if there is room; empty
  // when it is sent unprepared.
  std::string prepared_name(const std::string& text, size_t params, Clock::time_point deadline);

  pg_conn* conn_;
  bool broken_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // statement text -> name
  size_t prepared_serial_ = 0;
};

// Waits until the socket is ready for `events` (POLLIN/POLLOUT) or the deadline passes.
// Returns false on timeout. Retries on EINTR.
bool wait_socket(int fd, short events, Clock::time_point deadline);

}  // namespace podium::db
