#pragma once
// Result's private state: the PGresult it owns. Only backend/db/*.cpp include this.

#include <libpq-fe.h>

#include "backend/db/database.h"

namespace podium::db {

struct Result::Impl {
  explicit Impl(PGresult* r) : res(r) {}
  ~Impl() { PQclear(res); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  PGresult* res;
};

}  // namespace podium::db
