#pragma once
// How a run is read and shown: the one SELECT and JSON form behind GET /runs, GET /runs/{id},
// submission, cancel and import answers, so every route shows a run the same way.

#include <string>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"

namespace podium::api {

// "SELECT ... FROM runs r LEFT JOIN clusters c ... LEFT JOIN users u ... LEFT JOIN datasets d "
// (append WHERE / ORDER BY).
std::string run_select();
// One row of run_select() as the API shows a run; the plan only when asked (it is large).
nlohmann::json run_json(const db::Result& r, size_t row, bool with_plan);
// The same as JSON text, for GET /runs/{id}: the stored spec and plan are spliced in as
// PostgreSQL sent their text (jsonb's own output, so valid JSON) rather than parsed and written
// again; for a planned run they are most of the body and were most of its rendering. The same
// values as run_json's (numbers as stored, keys in another order).
std::string run_body(const db::Result& r, size_t row);
// The run by id; throws Problem 404 when there is none.
db::Result load_run(db::Transaction& tx, const std::string& id);
// The same as one statement on its own (Database::exec_alone): GET /runs/{id}'s one read.
db::Result load_run(db::Database& db, const std::string& id);

}  // namespace podium::api
