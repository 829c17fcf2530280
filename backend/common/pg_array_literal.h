#pragma once
// One-dimensional PostgreSQL array literals ('{"a","b\"c",NULL}') for batch parameters:
// a batch of values travels in one $n::text[] / float8[] / bigint[] / jsonb[] parameter and the
// statement unnests them. PostgreSQL reads an array literal several times faster than the same
// values as JSON pulled apart with jsonb_array_elements and ->>, which dominated the cost of a
// log batch's INSERT.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podium {

class PgArrayLiteral {
 public:
  PgArrayLiteral() : out_("{") {}
  void text(std::string_view v);         // any bytes but NUL; quoted and escaped
  void number(std::optional<double> v);  // NULL when empty; NaN as 'NaN'; +-Infinity as NULL
  void integer(std::int64_t v);
  void boolean(bool v);
  void null();
  std::string str() const { return out_ + "}"; }

 private:
  void separate();
  std::string out_;
  bool empty_ = true;
};

}  // namespace podium
