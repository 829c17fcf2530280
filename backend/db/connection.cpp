#include "backend/db/connection.h"

#include <libpq-fe.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include "backend/db/errors.h"
#include "backend/db/result_impl.h"

namespace podium::db {
namespace {

std::string field(const PGresult* r, int code) {
  const char* v = PQresultErrorField(r, code);
  return v ? std::string(v) : std::string();
}

// Severity NOTICE/DEBUG/LOG/INFO go to debug; WARNING to warn. A FATAL arriving outside a
// query (the server is terminating this session, e.g. during shutdown) marks the connection so
// that the pool drops it instead of handing it out.
void on_notice(void* arg, const PGresult* r) {
  const std::string severity = field(r, PG_DIAG_SEVERITY_NONLOCALIZED);
  const std::string message = single_line(field(r, PG_DIAG_MESSAGE_PRIMARY));
  if (severity == "FATAL" || severity == "PANIC") {
    *static_cast<bool*>(arg) = true;
    spdlog::warn("postgres: {}: {}", severity, message);
  } else if (severity == "WARNING") {
    spdlog::warn("postgres: {}", message);
  } else {
    spdlog::debug("postgres: {}: {}", severity, message);
  }
}

long long whole_seconds_at_least_2(std::chrono::milliseconds ms) {
  // libpq's connect_timeout is in whole seconds with a floor of 2; our own deadline is exact.
  long long s = (ms.count() + 999) / 1000;
  return std::max(2LL, s);
}

}  // namespace

bool wait_socket(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline != Clock::time_point::max()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      timeout_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd p{};
    p.fd = fd;
    p.events = events;
    int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) return true;  // ready, or POLLERR/POLLHUP: libpq reports the details
    if (rc == 0) {
      if (deadline != Clock::time_point::max() && Clock::now() >= deadline) return false;
      continue;
    }
    if (errno != EINTR) return true;  // let libpq's next call surface the socket error
  }
}

std::unique_ptr<Connection> Connection::open(const ConnectOptions& options,
                                             Clock::time_point deadline) {
  deadline = std::min(deadline, Clock::now() + options.connect_timeout);
  const std::string timeout = std::to_string(whole_seconds_at_least_2(options.connect_timeout));
  // Defaults first, the caller's connection string last: with expand_dbname libpq processes the
  // keywords in order, so anything the operator wrote in PODIUM_DATABASE_URL wins. Keepalives
  // make a silently vanished server (network partition) visible on idle and LISTEN sockets.
  const char* keys[] = {"connect_timeout",  "application_name", "client_encoding",
                        "keepalives",       "keepalives_idle",  "keepalives_interval",
                        "keepalives_count", "dbname",           nullptr};
  const char* values[] = {timeout.c_str(),
                          options.application_name.c_str(),
                          "UTF8",
                          "1",
                          "30",
                          "10",
                          "3",
                          options.conninfo.c_str(),
                          nullptr};
  PGconn* raw = PQconnectStartParams(keys, values, 1);
  if (raw == nullptr) throw DbError(DbError::Kind::unavailable, "", "libpq: out of memory");
  std::unique_ptr<Connection> conn(new Connection(raw));
  PQsetNoticeReceiver(raw, on_notice, &conn->broken_);

  auto fail = [&](const std::string& why) -> DbError {
    return DbError(DbError::Kind::unavailable, "08001",
                   "cannot connect to the database: " + single_line(why));
  };
  if (PQstatus(raw) == CONNECTION_BAD) throw fail(PQerrorMessage(raw));
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK) {
    if (st == PGRES_POLLING_FAILED) throw fail(PQerrorMessage(raw));
    const short events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (!wait_socket(PQsocket(raw), events, deadline)) {
      throw fail("no session within " + std::to_string(options.connect_timeout.count()) + " ms");
    }
    st = PQconnectPoll(raw);
  }
  if (PQsetnonblocking(raw, 1) != 0) throw fail(PQerrorMessage(raw));
  // Per-connection server-side limit; the client-side deadlines in exec() sit above it.
  conn->exec("SET statement_timeout = " + std::to_string(options.statement_timeout.count()), {},
             deadline);
  return conn;
}

Connection::~Connection() {
  PQfinish(conn_);
}

bool Connection::broken() const {
  return broken_ || PQstatus(conn_) != CONNECTION_OK;
}

bool Connection::reusable() const {
  return !broken() && PQtransactionStatus(conn_) == PQTRANS_IDLE;
}

bool Connection::check_idle() {
  if (!reusable()) return false;
  // A server that shut down sent a FATAL notice and then EOF; they may arrive in separate reads.
  for (int i = 0; i < 4; ++i) {
    pollfd p{};
    p.fd = PQsocket(conn_);
    p.events = POLLIN;
    int rc = ::poll(&p, 1, 0);
    if (rc == 0) break;
    if (rc < 0) {
      if (errno == EINTR) continue;
      broken_ = true;
      break;
    }
    if (PQconsumeInput(conn_) == 0) {
      broken_ = true;
      break;
    }
    while (PGnotify* n = PQnotifies(conn_)) PQfreemem(n);
    if (broken()) break;
  }
  return reusable();
}

void Connection::fail_transport(const std::string& what) {
  broken_ = true;
  throw DbError(DbError::Kind::unavailable, "08006",
                "database connection lost: " + single_line(what));
}

void Connection::flush(Clock::time_point deadline) {
  for (;;) {
    int rc = PQflush(conn_);
    if (rc == 0) return;
    if (rc < 0) fail_transport(PQerrorMessage(conn_));
    if (!wait_socket(PQsocket(conn_), POLLIN | POLLOUT, deadline)) {
      broken_ = true;
      throw DbError(DbError::Kind::unavailable, "",
                    "database did not accept the statement in time");
    }
    // libpq: when the socket is readable while flushing, input must be consumed first.
    if (PQconsumeInput(conn_) == 0) fail_transport(PQerrorMessage(conn_));
  }
}

namespace {

// Statements PostgreSQL can prepare (utility statements such as BEGIN or SET cannot).
bool preparable(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  auto starts = [&](std::string_view word) {
    if (sql.size() - i < word.size()) return false;
    for (size_t k = 0; k < word.size(); ++k)
      if (std::toupper(static_cast<unsigned char>(sql[i + k])) != word[k]) return false;
    return sql.size() - i == word.size() ||
           !std::isalnum(static_cast<unsigned char>(sql[i + word.size()]));
  };
  return starts("SELECT") || starts("INSERT") || starts("UPDATE") || starts("DELETE") ||
         starts("WITH");
}

}  // namespace

std::string Connection::prepared_name(const std::string& text, size_t params,
                                      Clock::time_point deadline) {
  if (auto it = prepared_.find(text); it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxPrepared || !preparable(text)) return {};
  std::string name = "podium_" + std::to_string(++prepared_serial_);
  // A statement that does not parse fails here, as it would unprepared (and, inside a
  // transaction, aborts it the same way). The prepared form outlives a rollback: it belongs to
  // the session, not the transaction.
  if (PQsendPrepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params), nullptr) == 0) {
    if (PQstatus(conn_) == CONNECTION_BAD) fail_transport(PQerrorMessage(conn_));
    throw DbError(DbError::Kind::other, "", single_line(PQerrorMessage(conn_)));
  }
  collect(deadline);
  prepared_.emplace(text, name);
  return name;
}

Result Connection::exec(std::string_view sql, const Params& params, Clock::time_point deadline) {
  if (broken()) throw DbError(DbError::Kind::unavailable, "", "database connection lost");
  const std::string text(sql);  // libpq wants a NUL-terminated string
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  const std::string name = prepared_name(text, params.size(), deadline);
  const int sent = name.empty()
                       ? PQsendQueryParams(conn_, text.c_str(), static_cast<int>(values.size()),
                                           nullptr, values.data(), nullptr, nullptr, 0)
                       : PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                                             values.data(), nullptr, nullptr, 0);
  if (sent == 0) {
    if (PQstatus(conn_) == CONNECTION_BAD) fail_transport(PQerrorMessage(conn_));
    throw DbError(DbError::Kind::other, "", single_line(PQerrorMessage(conn_)));
  }
  try {
    return collect(deadline);
  } catch (const DbError& e) {
    // A table's columns changed under a prepared statement ("cached plan must not change result
    // type"): forget it, so that the next use prepares it afresh.
    if (!name.empty() && e.sqlstate() == "0A000") prepared_.erase(text);
    throw;
  }
}

void Connection::exec_script(std::string_view sql, Clock::time_point deadline) {
  if (broken()) throw DbError(DbError::Kind::unavailable, "", "database connection lost");
  const std::string text(sql);
  if (PQsendQuery(conn_, text.c_str()) == 0) {
    if (PQstatus(conn_) == CONNECTION_BAD) fail_transport(PQerrorMessage(conn_));
    throw DbError(DbError::Kind::other, "", single_line(PQerrorMessage(conn_)));
  }
  collect(deadline);
}

Result Connection::collect(Clock::time_point deadline) {
  flush(deadline);
  PGresult* error = nullptr;
  PGresult* last = nullptr;
  auto clear = [&] {
    PQclear(error);
    PQclear(last);
  };
  for (;;) {
    while (PQisBusy(conn_)) {
      if (!wait_socket(PQsocket(conn_), POLLIN, deadline)) {
        clear();
        // The server did not answer within statement_timeout plus a margin: it is hung or
        // unreachable. The session's state is unknown, so the connection is dropped.
        broken_ = true;
        throw DbError(DbError::Kind::unavailable, "", "no answer from the database in time");
      }
      if (PQconsumeInput(conn_) == 0) {
        clear();
        fail_transport(PQerrorMessage(conn_));
      }
    }
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) break;
    const ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH) {
      PQclear(r);
      clear();
      // The protocol now expects COPY data this API does not speak; drop the session.
      broken_ = true;
      throw DbError(DbError::Kind::other, "", "COPY is not supported through exec()");
    }
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE || st == PGRES_NONFATAL_ERROR) {
      if (error == nullptr) {
        error = r;
      } else {
        PQclear(r);
      }
    } else {
      PQclear(last);
      last = r;
    }
  }
  if (error != nullptr) {
    std::string sqlstate = field(error, PG_DIAG_SQLSTATE);
    std::string message = single_line(field(error, PG_DIAG_MESSAGE_PRIMARY));
    if (message.empty()) message = single_line(PQresultErrorMessage(error));
    if (message.empty()) message = single_line(PQerrorMessage(conn_));
    const std::string detail = single_line(field(error, PG_DIAG_MESSAGE_DETAIL));
    if (!detail.empty()) message += " (" + detail + ")";
    std::string constraint = field(error, PG_DIAG_CONSTRAINT_NAME);
    const bool bad_response = PQresultStatus(error) == PGRES_BAD_RESPONSE;
    clear();
    if (bad_response || PQstatus(conn_) == CONNECTION_BAD) {
      broken_ = true;
      throw DbError(DbError::Kind::unavailable, sqlstate, "database connection lost: " + message);
    }
    const DbError::Kind kind = kind_for_sqlstate(sqlstate);  // before sqlstate is moved from
    throw DbError(kind, std::move(sqlstate), std::move(message), std::move(constraint));
  }
  if (last == nullptr) {
    if (PQstatus(conn_) == CONNECTION_BAD) fail_transport(PQerrorMessage(conn_));
    return Result();
  }
  return Result(std::make_unique<Result::Impl>(last));
}

}  // namespace podium::db
