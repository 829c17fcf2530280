// Sign-in for the dashboard (session cookie), the caller's own API tokens.
#include <semaphore>
#include <thread>

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/login_throttle.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"

namespace podium::api {

namespace {

nlohmann::json me_json(const http::Principal& p) {
  if (p.kind == http::Principal::Kind::worker)
    return {{"kind", "worker"}, {"token_id", p.token_id}, {"cluster_id", p.cluster_id}};
  return {{"kind", "user"},
          {"id", p.user_id},
          {"username", p.username},
          {"role", http::role_name(p.role)}};
}

// Secure when the browser reaches the server over HTTPS: the server serves TLS itself, or sits
// behind a proxy that does (public_url https). The browser then never sends it in clear.
std::string session_cookie(const std::string& value, long max_age, const ServerConfig& config) {
  const bool secure = !config.tls_cert_file.empty() || config.public_url.rfind("https://", 0) == 0;
  return "podium_session=" + value +
         "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age) +
         (secure ? "; Secure" : "");
}

http::Response too_many_attempts(std::chrono::seconds wait) {
  http::Problem p;
  p.status = 429;
  p.title = http::status_title(429);
  p.detail = "too many failed sign-ins for this user or address; retry in " +
             std::to_string(wait.count()) + " s";
  p.extra["retry_after_seconds"] = wait.count();
  auto res = p.to_response();
  res.set_header("Retry-After", std::to_string(wait.count()));
  return res;
}

// argon2id at moderate limits takes 256 MiB for most of a second: at most this many at once,
// so a burst of sign-ins cannot exhaust memory or every handler thread.
constexpr std::ptrdiff_t kConcurrentPasswordChecks = 2;
using PasswordChecks = std::counting_semaphore<kConcurrentPasswordChecks>;

// One permit to hash, held for a scope: released however the scope ends (a database error
// while storing a rehash throws through it).
class PasswordCheckPermit {
 public:
  explicit PasswordCheckPermit(PasswordChecks& checks)
      : checks_(checks), held_(checks.try_acquire_for(std::chrono::seconds(5))) {}
  ~PasswordCheckPermit() {
    if (held_) checks_.release();
  }
  PasswordCheckPermit(const PasswordCheckPermit&) = delete;
  PasswordCheckPermit& operator=(const PasswordCheckPermit&) = delete;
  bool held() const { return held_; }

 private:
  PasswordChecks& checks_;
  const bool held_;
};

http::Response too_many_at_once() {
  auto res = http::unavailable("too many sign-ins at once; retry shortly").to_response();
  res.set_header("Retry-After", "1");
  return res;
}

// What every sign-in shares for the server's lifetime: the guess throttle and the limit on
// password checks at once.
struct LoginGuards {
  http::LoginThrottle throttle;
  PasswordChecks password_checks{kConcurrentPasswordChecks};
};

http::Response login(ApiContext& ctx, http::RequestContext& rc, LoginGuards& guards) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  // Either username + password, or an API token (the admin token the quick start prints).
  const bool with_token = in.present("token");
  auto token = in.string("token", with_token, 512);
  auto username = in.string("username", !with_token, 128);
  auto password = in.string("password", !with_token, 1024);
  in.reject_unknown_fields();
  in.finish();
  // Checked before any hashing: a refused guess costs the server nothing.
  const std::string user = with_token ? std::string() : *username;
  const std::string& address = rc.request.remote_address;
  if (auto wait = guards.throttle.retry_after(user, address); wait.count() > 0)
    return too_many_attempts(wait);
  db::Result r;
  if (with_token) {
    r = ctx.db.transact(
        [&](db::Transaction& tx) {
          return tx.exec(
              "SELECT u.id, u.username, u.role FROM api_tokens t "
              "JOIN users u ON u.id = t.user_id "
              "WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND NOT u.disabled",
              {secrets::token_hash(*token)});
        },
        db::TxMode::read_only);
    if (r.empty()) {
      guards.throttle.record_failure(user, address);
      throw http::unauthorized("invalid or revoked token");
    }
  } else {
    r = ctx.db.transact(
        [&](db::Transaction& tx) {
          return tx.exec(
              "SELECT id, username, role, password_hash FROM users "
              "WHERE username = $1 AND NOT disabled",
              {*username});
        },
        db::TxMode::read_only);
    const bool known = !r.empty() && !r.is_null(0, "password_hash");
    // Held across the check and a rehash: both cost a full argon2id computation.
    PasswordCheckPermit permit(guards.password_checks);
    if (!permit.held()) return too_many_at_once();
    // Asked again now: a burst of guesses all passed the first check before any of them
    // had failed; those queued behind the permit must not each get a guess.
    if (auto wait = guards.throttle.retry_after(user, address); wait.count() > 0)
      return too_many_attempts(wait);
    // Verify against a dummy hash when the user is unknown so both paths cost the same
    // time (made under the permit: its first use hashes too).
    static const std::string dummy = secrets::hash_password("podium-timing-equaliser").value_or("");
    const bool verified =
        secrets::verify_password(known ? r.at(0, "password_hash") : dummy, *password);
    if (!(verified && known)) {
      guards.throttle.record_failure(user, address);
      throw http::unauthorized("unknown user or wrong password");
    }
    guards.throttle.record_success(user);
    // A hash made with older (weaker) parameters is replaced now that the password is known.
    if (secrets::password_needs_rehash(r.at(0, "password_hash"))) {
      if (auto fresh = secrets::hash_password(*password))
        ctx.db.transact([&](db::Transaction& tx) {
          tx.exec("UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3",
                  {r.at(0, "id"), *fresh, r.at(0, "password_hash")});
        });
    }
  }
  const std::string sid = secrets::new_token("pds_");
  const long ttl = static_cast<long>(
      std::chrono::duration_cast<std::chrono::seconds>(ctx.config.session_ttl).count());
  ctx.db.transact([&](db::Transaction& tx) {
    tx.exec(
        "INSERT INTO sessions (id_hash, user_id, expires_at) VALUES ($1, $2, now() + "
        "make_interval(secs => $3))",
        {secrets::token_hash(sid), r.at(0, "id"), std::to_string(ttl)});
    tx.exec("DELETE FROM sessions WHERE expires_at < now()");
  });
  http::Principal p;
  p.user_id = r.at(0, "id");
  p.username = r.at(0, "username");
  p.role = http::parse_role(r.at(0, "role")).value_or(http::Role::viewer);
  auto res = json_response(200, {{"user", me_json(p)}});
  res.set_header("Set-Cookie", session_cookie(sid, ttl, ctx.config));
  return res;
}

http::Response logout(ApiContext& ctx, http::RequestContext& rc) {
  if (!rc.principal->session_id.empty())
    ctx.db.transact([&](db::Transaction& tx) {
      tx.exec("DELETE FROM sessions WHERE id_hash = $1", {rc.principal->session_id});
    });
  forget_credentials(ctx);
  auto res = http::Response::empty(204);
  res.set_header("Set-Cookie", session_cookie("", 0, ctx.config));
  return res;
}

http::Response get_me(ApiContext&, http::RequestContext& rc) {
  return json_response(200, me_json(*rc.principal));
}

// The caller's own API tokens.
http::Response list_tokens(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec("SELECT id, seq, name, " + rfc3339("created_at") + " AS created_at, " +
                           rfc3339("last_used_at") + " AS last_used_at, " + rfc3339("revoked_at") +
                           " AS revoked_at FROM api_tokens WHERE user_id = $1 AND ($2::bigint IS "
                           "NULL OR seq < $2) "
                           "ORDER BY seq DESC LIMIT $3",
                       {user_id(rc), page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back({{"id", r.at(i, "id")},
                     {"name", r.at(i, "name")},
                     {"created_at", r.at(i, "created_at")},
                     {"last_used_at", nullable_string(r, i, "last_used_at")},
                     {"revoked_at", nullable_string(r, i, "revoked_at")}});
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response create_token(ApiContext& ctx, http::RequestContext& rc) {
  nlohmann::json body =
      rc.request.body.empty() ? nlohmann::json::object() : http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", false, 128);
  in.reject_unknown_fields();
  in.finish();
  const std::string token = secrets::new_token("pdm_");
  const std::string id = new_id("tok");
  ctx.db.transact([&](db::Transaction& tx) {
    tx.exec("INSERT INTO api_tokens (id, user_id, name, token_hash) VALUES ($1, $2, $3, $4)",
            {id, user_id(rc), name.value_or(""), secrets::token_hash(token)});
    audit(tx, rc, "create", "api_token", id);
  });
  return json_response(201, {{"id", id}, {"name", name.value_or("")}, {"token", token}});
}

http::Response revoke_token(ApiContext& ctx, http::RequestContext& rc) {
  const std::string& id = rc.param("id");
  const bool admin = rc.principal->is_admin();
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    auto res = tx.exec(
        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND "
        "(user_id = $2 OR $3::boolean) RETURNING id",
        {id, user_id(rc), admin ? "true" : "false"});
    if (!res.empty()) audit(tx, rc, "revoke", "api_token", id);
    return res;
  });
  if (r.empty()) throw http::not_found("no token " + id);
  forget_credentials(ctx);  // refused from the very next request
  return http::Response::empty(204);
}

}  // namespace

void register_auth_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  // The guards live as long as the router keeps the route.
  routes.add("POST", "/api/v1/auth/login", http::Access::open,
             [guards = std::make_shared<LoginGuards>()](ApiContext& c, http::RequestContext& rc) {
               return login(c, rc, *guards);
             });
  routes.add("POST", "/api/v1/auth/logout", http::Access::reader, logout);
  routes.add("GET", "/api/v1/auth/me", http::Access::reader, get_me);
  routes.add("GET", "/api/v1/tokens", http::Access::reader, list_tokens);
  routes.add("POST", "/api/v1/tokens", http::Access::reader, create_token);
  routes.add("DELETE", "/api/v1/tokens/{id}", http::Access::reader, revoke_token);
}

}  // namespace podium::api
