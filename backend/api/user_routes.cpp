// Accounts (admin only): create users with a role and a first API token, change roles, disable.
#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"

namespace podium::api {

namespace {

nlohmann::json user_json(const db::Result& r, size_t i) {
  return {{"id", r.at(i, "id")},
          {"username", r.at(i, "username")},
          {"role", r.at(i, "role")},
          {"disabled", r.boolean(i, "disabled")},
          {"created_at", r.at(i, "created_at")}};
}

std::string user_select() {
  return "SELECT id, seq, username, role, disabled, " + rfc3339("created_at") +
         " AS created_at FROM users ";
}

bool valid_username(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '@')
      return false;
  return true;
}

http::Response list_users(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            user_select() + "WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2",
            {page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(user_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response create_user(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto username = in.string("username", true, 64);
  auto role = in.choice("role", true, {"admin", "member", "viewer"});
  auto password = in.string("password", false, 1024);
  if (username && !valid_username(*username))
    in.error("username", "may contain letters, digits and - _ . @ only");
  if (password && password->size() < 8) in.error("password", "must be at least 8 characters");
  in.reject_unknown_fields();
  in.finish();
  std::optional<std::string> hash;
  if (password) {
    hash = secrets::hash_password(*password);
    if (!hash) throw http::unavailable("could not hash the password (out of memory)");
  }
  const std::string id = new_id("usr");
  const std::string token = secrets::new_token("pdm_");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto exists = tx.exec("SELECT 1 FROM users WHERE username = $1", {*username});
    if (!exists.empty()) throw http::conflict("a user named '" + *username + "' exists");
    tx.exec("INSERT INTO users (id, username, role, password_hash) VALUES ($1, $2, $3, $4)",
            {id, *username, *role, hash});
    tx.exec("INSERT INTO api_tokens (id, user_id, name, token_hash) VALUES ($1, $2, 'initial', $3)",
            {new_id("tok"), id, secrets::token_hash(token)});
    audit(tx, rc, "create", "user", id, {{"username", *username}, {"role", *role}});
    return tx.exec(user_select() + "WHERE id = $1", {id});
  });
  auto out = user_json(r, 0);
  out["token"] = token;  // shown once
  return json_response(201, out);
}

http::Response get_user(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(user_select() + "WHERE id = $1 OR username = $1", {rc.param("id")});
      },
      db::TxMode::read_only);
  if (r.empty()) throw http::not_found("no user " + rc.param("id"));
  return json_response(200, user_json(r, 0));
}

http::Response update_user(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto role = in.choice("role", false, {"admin", "member", "viewer"});
  auto disabled = in.boolean("disabled", false);
  auto password = in.string("password", false, 1024);
  if (password && password->size() < 8) in.error("password", "must be at least 8 characters");
  in.reject_unknown_fields();
  in.finish();
  std::optional<std::string> hash;
  if (password) {
    hash = secrets::hash_password(*password);
    if (!hash) throw http::unavailable("could not hash the password (out of memory)");
  }
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto found =
        tx.exec("SELECT id FROM users WHERE id = $1 OR username = $1 FOR UPDATE", {rc.param("id")});
    if (found.empty()) throw http::not_found("no user " + rc.param("id"));
    const std::string id = found.at(0, "id");
    if (id == user_id(rc) && ((role && *role != "admin") || (disabled && *disabled)))
      throw http::conflict("an admin cannot demote or disable their own account");
    tx.exec(
        "UPDATE users SET role = coalesce($2, role), disabled = coalesce($3::boolean, disabled), "
        "password_hash = coalesce($4, password_hash) WHERE id = $1",
        {id, role, disabled ? db::Param(*disabled ? "true" : "false") : db::Param(), hash});
    if (disabled && *disabled) {
      tx.exec("DELETE FROM sessions WHERE user_id = $1", {id});
    } else if (password) {
      // A new password is how an admin locks out whoever learned the old one: the user's
      // dashboard sessions end, except the one making this request (an admin changing their
      // own password stays signed in here). API tokens are separate credentials and stay.
      tx.exec("DELETE FROM sessions WHERE user_id = $1 AND id_hash IS DISTINCT FROM $2",
              {id, rc.principal->session_id.empty() ? db::Param()
                                                    : db::Param(rc.principal->session_id)});
    }
    audit(tx, rc, "update", "user", id,
          {{"role", role ? nlohmann::json(*role) : nlohmann::json(nullptr)},
           {"disabled", disabled ? nlohmann::json(*disabled) : nlohmann::json(nullptr)},
           {"password_changed", password.has_value()}});
    return tx.exec(user_select() + "WHERE id = $1", {id});
  });
  forget_credentials(ctx);  // a new role, a disabled account or ended sessions count at once
  return json_response(200, user_json(r, 0));
}

}  // namespace

void register_user_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/users", http::Access::admin, list_users);
  routes.add("POST", "/api/v1/users", http::Access::admin, create_user);
  routes.add("GET", "/api/v1/users/{id}", http::Access::admin, get_user);
  routes.add("PATCH", "/api/v1/users/{id}", http::Access::admin, update_user);
}

}  // namespace podium::api
