#include "backend/api/rfc3339_query.h"

#include <chrono>
#include <regex>

#include "backend/common/problem.h"

namespace podium::api {

bool valid_rfc3339(const std::string& text) {
  // date-time = full-date "T" partial-time time-offset (RFC 3339 section 5.6; "t"/"z" allowed).
  static const std::regex pattern(
      R"((\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2})))");
  std::smatch m;
  if (!std::regex_match(text, m, pattern)) return false;
  auto num = [&](size_t i) { return std::stoi(m[i].str()); };
  const std::chrono::year_month_day day{std::chrono::year{num(1)},
                                        std::chrono::month{static_cast<unsigned>(num(2))},
                                        std::chrono::day{static_cast<unsigned>(num(3))}};
  if (num(1) < 1 || !day.ok()) return false;
  // Second 60 is a leap second (RFC 3339 allows it; PostgreSQL reads it as the next minute).
  if (num(4) > 23 || num(5) > 59 || num(6) > 60) return false;
  // PostgreSQL takes offsets up to 15:59 (real ones end at +14:00); beyond that it would refuse
  // the statement, so the value is refused here.
  if (m[9].matched && (num(9) > 15 || num(10) > 59)) return false;
  return true;
}

std::optional<std::string> query_rfc3339(const http::RequestContext& ctx, const std::string& name) {
  auto v = ctx.request.query_param(name);
  if (!v) return std::nullopt;
  if (!valid_rfc3339(*v))
    throw http::bad_request(
        name + " must be an RFC 3339 date-time such as 2026-11-27T12:00:00Z, not '" + *v + "'",
        {{name,
          "an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM), offsets up to 15:59)"}});
  return v;
}

}  // namespace podium::api
