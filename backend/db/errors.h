#pragma once
// SQLSTATE -> DbError::Kind: the one place that decides whether an error means "drop the
// connection", "retry the transaction" or "tell the user".

#include <string>
#include <string_view>

#include "backend/db/database.h"

namespace podium::db {

// Kind for a server-reported SQLSTATE (five characters). Unknown or empty codes are `other`;
// transport failures without a SQLSTATE are classified by the caller (PQstatus), not here.
DbError::Kind kind_for_sqlstate(std::string_view sqlstate);

// Stable lower-case name ("unavailable", "unique_violation", ...) for logs and metrics labels.
std::string_view kind_name(DbError::Kind kind);

// libpq's multi-line messages ("...\n\tIs the server running...\n") as one log-friendly line.
std::string single_line(std::string message);

}  // namespace podium::db
