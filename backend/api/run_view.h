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
// The run by id; throws Problem 404 when there is none.
db::Result load_run(db::Transaction& tx, const std::string& id);
// The same as one statement on its own (Database::exec_alone): GET /runs/{id}'s one read.
db::Result load_run(db::Database& db, const std::string& id);

}  // namespace podium::api
