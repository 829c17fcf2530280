#include "backend/ingest/pg_array.h"

#include <charconv>
#include <cmath>

namespace podium::ingest {

void ArrayLiteral::separate() {
  if (!empty_) out_ += ',';
  empty_ = false;
}

void ArrayLiteral::text(std::string_view v) {
  separate();
  out_ += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') out_ += '\\';
    out_ += c;
  }
  out_ += '"';
}

void ArrayLiteral::number(std::optional<double> v) {
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

void ArrayLiteral::integer(std::int64_t v) {
  separate();
  out_ += std::to_string(v);
}

void ArrayLiteral::boolean(bool v) {
  separate();
  out_ += v ? 't' : 'f';
}

void ArrayLiteral::null() {
  separate();
  out_ += "NULL";
}

}  // namespace podium::ingest
