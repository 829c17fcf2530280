#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/db/database.h"
#include "backend/db/result_impl.h"

namespace podium::db {
namespace {

[[noreturn]] void misuse(const std::string& what) {
  // A wrong column name or row index is a programming error in the caller's SQL handling.
  throw DbError(DbError::Kind::other, "", what);
}

}  // namespace

Result::Result() = default;
Result::~Result() = default;
Result::Result(Result&&) noexcept = default;
Result& Result::operator=(Result&&) noexcept = default;
Result::Result(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

size_t Result::size() const {
  return impl_ ? static_cast<size_t>(PQntuples(impl_->res)) : 0;
}

size_t Result::columns() const {
  return impl_ ? static_cast<size_t>(PQnfields(impl_->res)) : 0;
}

std::string Result::column_name(size_t col) const {
  if (col >= columns()) misuse("result column " + std::to_string(col) + " out of range");
  return PQfname(impl_->res, static_cast<int>(col));
}

int Result::column_index(std::string_view name) const {
  // Exact match on the name as PostgreSQL returned it; PQfnumber would case-fold and parse quotes.
  if (!impl_) return -1;
  const auto& names = impl_->names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

struct Cell {
  const char* text;  // nullptr for SQL NULL
  int length;
};

Cell cell(const Result& r, const Result::Impl* impl, size_t row, std::string_view column) {
  if (impl == nullptr || row >= r.size()) {
    misuse("result row " + std::to_string(row) + " out of range (" + std::to_string(r.size()) +
           " rows)");
  }
  const int col = r.column_index(column);
  if (col < 0) misuse("result has no column \"" + std::string(column) + "\"");
  const int irow = static_cast<int>(row);
  if (PQgetisnull(impl->res, irow, col)) return {nullptr, 0};
  return {PQgetvalue(impl->res, irow, col), PQgetlength(impl->res, irow, col)};
}

}  // namespace

bool Result::is_null(size_t row, std::string_view column) const {
  return cell(*this, impl_.get(), row, column).text == nullptr;
}

std::string Result::at(size_t row, std::string_view column) const {
  Cell c = cell(*this, impl_.get(), row, column);
  return c.text ? std::string(c.text, static_cast<size_t>(c.length)) : std::string();
}

std::optional<std::string> Result::opt(size_t row, std::string_view column) const {
  Cell c = cell(*this, impl_.get(), row, column);
  if (c.text == nullptr) return std::nullopt;
  return std::string(c.text, static_cast<size_t>(c.length));
}

std::optional<int64_t> Result::opt_int64(size_t row, std::string_view column) const {
  Cell c = cell(*this, impl_.get(), row, column);
  if (c.text == nullptr) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(c.text, c.text + c.length, v);
  if (ec != std::errc() || end != c.text + c.length) {
    misuse("column \"" + std::string(column) + "\" is not an integer: " + std::string(c.text));
  }
  return v;
}

int64_t Result::int64(size_t row, std::string_view column) const {
  return opt_int64(row, column).value_or(0);
}

std::optional<double> Result::opt_double(size_t row, std::string_view column) const {
  Cell c = cell(*this, impl_.get(), row, column);
  if (c.text == nullptr) return std::nullopt;
  const std::string_view s(c.text, static_cast<size_t>(c.length));
  // PostgreSQL spells the special float8/numeric values out.
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    misuse("column \"" + std::string(column) + "\" is not a number: " + std::string(s));
  }
  return v;
}

bool Result::boolean(size_t row, std::string_view column) const {
  Cell c = cell(*this, impl_.get(), row, column);
  return c.text != nullptr && c.length == 1 && c.text[0] == 't';
}

int64_t Result::affected_rows() const {
  if (!impl_) return 0;
  const char* s = PQcmdTuples(impl_->res);
  int64_t v = 0;
  if (s == nullptr || *s == '\0') return 0;
  std::from_chars(s, s + std::strlen(s), v);
  return v;
}

}  // namespace podium::db
