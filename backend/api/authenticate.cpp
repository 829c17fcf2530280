#include <chrono>
#include <string>
#include <string_view>

#include "backend/api/app.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"

namespace podium::api {

namespace {

std::optional<std::string> session_cookie(const http::Request& req) {
  auto cookie = req.header("cookie");
  if (!cookie) return std::nullopt;
  std::string_view c = *cookie;
  while (!c.empty()) {
    size_t semi = c.find(';');
    std::string_view part = c.substr(0, semi);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.rfind("podium_session=", 0) == 0) return std::string(part.substr(15));
    if (semi == std::string_view::npos) break;
    c.remove_prefix(semi + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<http::Principal> authenticate(ApiContext& ctx, const http::Request& req) {
  auto auth = req.header("authorization");
  if (auth) {
    std::string_view a = *auth;
    if (a.size() < 8 || (a.substr(0, 7) != "Bearer " && a.substr(0, 7) != "bearer "))
      throw http::unauthorized("the Authorization header must be 'Bearer <token>'");
    std::string token(a.substr(7));
    if (token.empty() || token.size() > 512) throw http::unauthorized("invalid token");
    const std::string hash = secrets::token_hash(token);
    // Every request starts here, so each kind of token is one statement on its own
    // (Database::exec_alone): one round trip, not a transaction of three or four.
    if (token.rfind("pda_", 0) == 0) {
      // A rank's attach token: minted for one attempt at its submission, dead once it ends.
      auto r = ctx.db.exec_alone(
          "SELECT a.id, r.cluster_id FROM attempts a JOIN runs r ON r.id = a.run_id WHERE "
          "a.attach_token_hash = $1 AND a.finished_at IS NULL",
          {hash});
      if (r.empty()) throw http::unauthorized("invalid token, or its attempt has finished");
      http::Principal p;
      p.kind = http::Principal::Kind::worker;
      p.token_id = "attach:" + r.at(0, "id");
      p.cluster_id = r.at(0, "cluster_id");
      p.attempt_id = r.at(0, "id");
      return p;
    }
    // Attach tokens (above) and cluster worker tokens (pdw_) are not cached: an attach token dies
    // with its attempt, which many paths end, and a worker token is used once per registration.
    const std::string cache_key = "bearer:" + hash;
    const bool cacheable = token.rfind("pdw_", 0) != 0;
    http::CredentialCache::Ticket ticket;
    if (ctx.credentials && cacheable) {
      ticket = ctx.credentials->ticket();
      if (auto cached = ctx.credentials->find(cache_key)) return cached;
    }
    auto remember = [&](const http::Principal& p) {
      if (ctx.credentials && cacheable) ctx.credentials->store(cache_key, p, ticket);
    };
    if (token.rfind("pdh_", 0) == 0) {
      // A host's own credential, issued when its agent registered.
      auto r = ctx.db.exec_alone("SELECT id, cluster_id FROM workers WHERE credential_hash = $1",
                                 {hash});
      if (r.empty())
        throw http::unauthorized(
            "invalid worker credential (another agent registered this host since); register "
            "again");
      http::Principal p;
      p.kind = http::Principal::Kind::worker;
      p.token_id = "host:" + r.at(0, "id");
      p.cluster_id = r.at(0, "cluster_id");
      p.worker_id = r.at(0, "id");
      remember(p);
      return p;
    }
    if (token.rfind("pdw_", 0) == 0) {
      auto r = ctx.db.exec_alone(
          "UPDATE worker_tokens SET last_used_at = now() WHERE token_hash = $1 AND revoked_at IS "
          "NULL RETURNING id, cluster_id",
          {hash});
      if (r.empty()) throw http::unauthorized("invalid or revoked token");
      http::Principal p;
      p.kind = http::Principal::Kind::worker;
      p.token_id = r.at(0, "id");
      p.cluster_id = r.at(0, "cluster_id");
      return p;
    }
    // last_used_at is kept to the minute: one write per token per minute, not per request (the
    // other requests write nothing, so their commit waits for no WAL flush).
    auto r = ctx.db.exec_alone(
        "WITH t AS (SELECT t.id, u.id AS user_id, u.username, u.role FROM api_tokens t JOIN users "
        "u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND NOT "
        "u.disabled), touched AS (UPDATE api_tokens SET last_used_at = now() WHERE id = (SELECT "
        "id FROM t) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') "
        "RETURNING id) SELECT id, user_id, username, role FROM t",
        {hash});
    if (r.empty()) throw http::unauthorized("invalid or revoked token");
    http::Principal p;
    p.kind = http::Principal::Kind::user;
    p.token_id = r.at(0, "id");
    p.user_id = r.at(0, "user_id");
    p.username = r.at(0, "username");
    p.role = http::parse_role(r.at(0, "role")).value_or(http::Role::viewer);
    remember(p);
    return p;
  }
  if (auto sid = session_cookie(req)) {
    if (sid->empty() || sid->size() > 256) throw http::unauthorized("invalid session");
    const std::string hash = secrets::token_hash(*sid);
    const std::string cache_key = "session:" + hash;
    http::CredentialCache::Ticket ticket;
    if (ctx.credentials) {
      ticket = ctx.credentials->ticket();
      if (auto cached = ctx.credentials->find(cache_key)) return cached;
    }
    auto r = ctx.db.exec_alone(
        "SELECT u.id, u.username, u.role, extract(epoch FROM s.expires_at - now())::float8 AS "
        "seconds_left FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1 AND "
        "s.expires_at > now() AND NOT u.disabled",
        {hash});
    if (r.empty()) throw http::unauthorized("the session has expired; sign in again");
    http::Principal p;
    p.kind = http::Principal::Kind::user;
    p.user_id = r.at(0, "id");
    p.username = r.at(0, "username");
    p.role = http::parse_role(r.at(0, "role")).value_or(http::Role::viewer);
    p.session_id = hash;
    if (ctx.credentials) {
      // Never served past the session's own expiry.
      const double left = std::stod(r.at(0, "seconds_left"));
      ctx.credentials->store(cache_key, p, ticket,
                             std::chrono::duration_cast<http::CredentialCache::Clock::duration>(
                                 std::chrono::duration<double>(left)));
    }
    return p;
  }
  return std::nullopt;
}

void authorize(http::Access access, const std::optional<http::Principal>& principal) {
  using http::Access;
  if (access == Access::open) return;
  if (!principal)
    throw http::unauthorized("this endpoint needs a token: send 'Authorization: Bearer <token>'");
  const bool worker = principal->kind == http::Principal::Kind::worker;
  switch (access) {
    case Access::open:
      return;
    case Access::agent:
      if (!worker) throw http::forbidden("only worker tokens may call the agent API");
      return;
    case Access::reader:
      if (worker) throw http::forbidden("worker tokens may call only /api/v1/agent/*");
      return;
    case Access::writer:
      if (worker) throw http::forbidden("worker tokens may call only /api/v1/agent/*");
      if (!principal->can_write()) throw http::forbidden("viewers have read-only access");
      return;
    case Access::admin:
      if (worker) throw http::forbidden("worker tokens may call only /api/v1/agent/*");
      if (!principal->is_admin()) throw http::forbidden("this needs the admin role");
      return;
  }
}

}  // namespace podium::api
