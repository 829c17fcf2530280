#pragma once
// Start-up work on a migrated database: the admin account and the server-wide secrets (first
// start), the built-in models (every start).

#include <optional>
#include <string>

#include "backend/db/database.h"

namespace podium::api {

struct BootstrapResult {
  std::optional<std::string> generated_admin_token;  // set only when this start created the admin
  bool admin_created = false;
  std::string cursor_key;
};

// Idempotent and safe with several servers starting at once (advisory lock).
BootstrapResult bootstrap(db::Database& db, const std::string& configured_admin_token);

}  // namespace podium::api
