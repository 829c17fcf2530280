#include "backend/common/pg_array_literal.h"

#include <charconv>
#include <cmath>

namespace podium {

void PgArrayLiteral::separate() {
  if (!empty_) out_ += ',';
  empty_ = false;
}

void PgArrayLiteral::text(std::string_view v) {
  separate();
  out_ += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') out_ += '\\';
    out_ += c;
  }
  out_ += '"';
}

void PgArrayLiteral::number(std::optional<double> v) {
  if (!v || std::isinf(*v)) return null();
  separate();
  if (std::isnan(*v)) {
    out_ += "NaN";
    return;
  }
  // Shortest text that reads back as the same double.
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *v);
  out_.append(buf, ec == std::errc() ? end : buf);
}

void PgArrayLiteral::integer(std::int64_t v) {
  separate();
  out_ += std::to_string(v);
}

void PgArrayLiteral::boolean(bool v) {
  separate();
  out_ += v ? 't' : 'f';
}

void PgArrayLiteral::null() {
  separate();
  out_ += "NULL";
}

}  // namespace podium
