#pragma once
// Result's private state: the PGresult it owns. Only backend/db/*.cpp include this.

#include <libpq-fe.h>

#include <string_view>
#include <vector>

#include "backend/db/database.h"

namespace podium::db {

struct Result::Impl {
  explicit Impl(PGresult* r) : res(r) {
    const int n = PQnfields(r);
    names.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) names.emplace_back(PQfname(r, i));
  }
  ~Impl() { PQclear(res); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  PGresult* res;
  // The column names as PostgreSQL returned them (they live in `res`), measured once: a row is
  // read by name, and a wide row (a run's, 38 columns) read field by field compared every name
  // of the row with strlen and memcmp for each field (a tenth of the server's time in
  // bench/limits.py's api_get_run).
  std::vector<std::string_view> names;
};

}  // namespace podium::db
