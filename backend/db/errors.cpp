#include "backend/db/errors.h"

namespace podium::db {

DbError::Kind kind_for_sqlstate(std::string_view s) {
  using K = DbError::Kind;
  if (s.size() != 5) return K::other;
  const std::string_view cls = s.substr(0, 2);
  // Serialization failure and deadlock: the transaction did nothing durable, running it again
  // is the documented remedy.
  if (s == "40001" || s == "40P01") return K::retryable;
  if (s == "23505") return K::unique_violation;
  // An exclusion constraint is a uniqueness rule over ranges: same meaning for the caller.
  if (s == "23P01") return K::unique_violation;
  if (s == "23503") return K::foreign_key;
  // Check, not-null and data exceptions (bad number, string too long, invalid JSON, ...) are
  // all "the input is semantically invalid".
  if (s == "23514" || s == "23502" || cls == "22") return K::check_violation;
  // query_canceled is what statement_timeout raises; lock_not_available is lock_timeout.
  if (s == "57014" || s == "55P03") return K::timeout;
  // Connection exceptions, and the server shutting down or still starting up.
  if (cls == "08" || s == "57P01" || s == "57P02" || s == "57P03") return K::unavailable;
  // Insufficient resources (too many connections, disk full, out of memory): the database
  // cannot serve right now, which is a 503 for the client, not a bug.
  if (cls == "53") return K::unavailable;
  return K::other;
}

std::string single_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const bool space = c == '\n' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

std::string_view kind_name(DbError::Kind kind) {
  switch (kind) {
    case DbError::Kind::unavailable:
      return "unavailable";
    case DbError::Kind::retryable:
      return "retryable";
    case DbError::Kind::unique_violation:
      return "unique_violation";
    case DbError::Kind::foreign_key:
      return "foreign_key";
    case DbError::Kind::check_violation:
      return "check_violation";
    case DbError::Kind::timeout:
      return "timeout";
    case DbError::Kind::other:
      return "other";
  }
  return "other";
}

}  // namespace podium::db
