#include "backend/api/bootstrap.h"

#include "backend/api/model_store.h"
#include "backend/api/sql_util.h"
#include "backend/common/secrets.h"

namespace podium::api {

BootstrapResult bootstrap(db::Database& db, const std::string& configured_admin_token) {
  return db.transact([&](db::Transaction& tx) {
    BootstrapResult out;
    tx.exec("SELECT pg_advisory_xact_lock(7321002)");
    tx.exec(
        "INSERT INTO settings (key, value) VALUES ('cursor_key', $1) ON CONFLICT (key) DO NOTHING",
        {secrets::random_hex(32)});
    out.cursor_key = tx.exec("SELECT value FROM settings WHERE key = 'cursor_key'").at(0, "value");
    seed_builtin_models(tx);  // the model catalog as rows (model_store.h)
    if (tx.exec("SELECT 1 FROM users LIMIT 1").empty()) {
      const std::string token =
          configured_admin_token.empty() ? secrets::new_token("pdm_") : configured_admin_token;
      const std::string id = new_id("usr");
      tx.exec("INSERT INTO users (id, username, role) VALUES ($1, 'admin', 'admin')", {id});
      tx.exec(
          "INSERT INTO api_tokens (id, user_id, name, token_hash) VALUES ($1, $2, 'bootstrap', $3)",
          {new_id("tok"), id, secrets::token_hash(token)});
      tx.exec(
          "INSERT INTO audit_log (actor, action, resource_type, resource_id) VALUES "
          "('podium-server', 'create', "
          "'user', $1)",
          {id});
      out.admin_created = true;
      if (configured_admin_token.empty()) out.generated_admin_token = token;
    }
    return out;
  });
}

}  // namespace podium::api
