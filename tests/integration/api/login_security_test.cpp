// Sign-in hardening: the session cookie's attributes, the password hash's parameters, and the
// rate limit on failed sign-ins (per user and per client address, 429 with Retry-After).
#include <gtest/gtest.h>
#include <sodium.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

Reply login(const Podium& p, const std::string& user, const std::string& password) {
  return p.anonymous().post("/api/v1/auth/login", {{"username", user}, {"password", password}});
}

class LoginSecurity : public PodiumTest {};

TEST_F(LoginSecurity, CookieIsHttpOnlyAndStrictButNotSecureOverPlainHttp) {
  podium().create_user("member", std::string("s3cret-pass"), "carol");
  auto r = login(podium(), "carol", "s3cret-pass");
  ASSERT_EQ(r.status, 200) << r;
  const auto cookie = r.header("set-cookie").value_or("");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  // A Secure cookie over http:// would never be sent back: the dashboard could not sign in.
  EXPECT_EQ(cookie.find("Secure"), std::string::npos) << cookie;
}

TEST_F(LoginSecurity, PasswordIsStoredAsArgon2idWithModerateLimits) {
  auto u = podium().create_user("viewer", std::string("s3cret-pass"), "dave");
  const auto hash = podium().db().scalar("SELECT password_hash FROM users WHERE id = $1", {u.id});
  EXPECT_EQ(hash.rfind("$argon2id$", 0), 0u) << hash;
  EXPECT_NE(hash.find("$m=262144,t=3,"), std::string::npos) << hash;
  EXPECT_EQ(login(podium(), "dave", "s3cret-pass").status, 200);
}

// A user whose hash predates the moderate limits (made with libsodium's interactive ones)
// signs in as before, and the stored hash is replaced by one with today's limits.
TEST_F(LoginSecurity, AHashWithOlderLimitsIsReplacedOnSignIn) {
  auto u = podium().create_user("member", std::string("s3cret-pass"), "olga");
  char old_hash[crypto_pwhash_STRBYTES];
  const std::string password = "s3cret-pass";
  ASSERT_EQ(crypto_pwhash_str_alg(old_hash, password.data(), password.size(),
                                  crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                  crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13),
            0);
  podium().db().query("UPDATE users SET password_hash = $2 WHERE id = $1",
                      {u.id, std::string(old_hash)});
  auto r = login(podium(), "olga", password);
  ASSERT_EQ(r.status, 200) << r;
  const auto hash = podium().db().scalar("SELECT password_hash FROM users WHERE id = $1", {u.id});
  EXPECT_NE(hash, std::string(old_hash));
  EXPECT_NE(hash.find("$m=262144,t=3,"), std::string::npos) << hash;
  EXPECT_EQ(login(podium(), "olga", password).status, 200);
}

std::string session_cookie_of(const Reply& login_reply) {
  const std::string set_cookie = login_reply.header("set-cookie").value_or("");
  return set_cookie.substr(0, set_cookie.find(';'));
}

int me_status(const Podium& p, const std::string& cookie) {
  return p.anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", cookie}}).status;
}

// An admin who resets a password locks out whoever knew the old one: every dashboard session of
// the user ends at once; an admin changing their own password keeps the session doing it.
TEST_F(LoginSecurity, ANewPasswordEndsTheUsersOtherSessions) {
  auto hana = podium().create_user("member", std::string("first-pass-1"), "hana");
  const std::string laptop = session_cookie_of(login(podium(), "hana", "first-pass-1"));
  const std::string phone = session_cookie_of(login(podium(), "hana", "first-pass-1"));
  ASSERT_EQ(me_status(podium(), laptop), 200);
  ASSERT_EQ(me_status(podium(), phone), 200);
  require_status(podium().admin().patch("/api/v1/users/hana", {{"password", "second-pass-2"}}),
                 200);
  EXPECT_EQ(me_status(podium(), laptop), 401);
  EXPECT_EQ(me_status(podium(), phone), 401);
  EXPECT_EQ(login(podium(), "hana", "first-pass-1").status, 401);
  EXPECT_EQ(login(podium(), "hana", "second-pass-2").status, 200);
  // Her API token is a separate credential and still works.
  EXPECT_EQ(hana.api.get("/api/v1/auth/me").status, 200);
  // A role change alone ends no session.
  const std::string fresh = session_cookie_of(login(podium(), "hana", "second-pass-2"));
  require_status(podium().admin().patch("/api/v1/users/hana", {{"role", "viewer"}}), 200);
  EXPECT_EQ(me_status(podium(), fresh), 200);

  podium().create_user("admin", std::string("admin-pass-1"), "ines");
  const std::string here = session_cookie_of(login(podium(), "ines", "admin-pass-1"));
  const std::string elsewhere = session_cookie_of(login(podium(), "ines", "admin-pass-1"));
  auto own = podium().anonymous().call("PATCH", "/api/v1/users/ines",
                                       json{{"password", "admin-pass-2"}}, {{"Cookie", here}});
  ASSERT_EQ(own.status, 200) << own;
  EXPECT_EQ(me_status(podium(), here), 200) << "the session that changed it stays";
  EXPECT_EQ(me_status(podium(), elsewhere), 401);
}

TEST_F(LoginSecurity, FailedSignInsAreLimitedPerUserWithAClear429) {
  podium().create_user("member", std::string("s3cret-pass"), "erin");
  podium().create_user("member", std::string("other-pass-1"), "frank");
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(is_problem(login(podium(), "erin", "wrong-pass"), 401)) << "attempt " << i;
  // Even the right password is refused now: the guesser must not learn it was right.
  auto refused = login(podium(), "erin", "s3cret-pass");
  ASSERT_TRUE(is_problem(refused, 429)) << refused;
  const auto retry = refused.header("retry-after");
  ASSERT_TRUE(retry.has_value()) << refused;
  const int seconds = std::stoi(*retry);
  EXPECT_GE(seconds, 1);
  EXPECT_LE(seconds, 60);
  EXPECT_NE(refused.json.value("detail", "").find("retry in"), std::string::npos) << refused;
  // Another user from the same address is not locked out by erin's failures.
  EXPECT_EQ(login(podium(), "frank", "other-pass-1").status, 200);
}

TEST_F(LoginSecurity, FailedSignInsAreLimitedPerAddressAcrossUsernames) {
  podium().create_user("member", std::string("s3cret-pass"), "grace");
  // 20 failures from this address and no one user with 5: three unknown names, then wrong
  // tokens. Not 20 passwords: each costs a full argon2id check, and 20 of them can take longer
  // than the 60 s window on a loaded machine, so the first would age out before the last.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(is_problem(login(podium(), "nobody-" + std::to_string(i), "x-wrong-pass"), 401))
        << "attempt " << i;
  for (int i = 3; i < 20; ++i)
    ASSERT_TRUE(is_problem(
        podium().anonymous().post("/api/v1/auth/login", {{"token", "pdm_wrong_" + random_hex()}}),
        401))
        << "attempt " << i;
  auto refused = login(podium(), "grace", "s3cret-pass");
  EXPECT_TRUE(is_problem(refused, 429)) << refused;
  EXPECT_TRUE(refused.header("retry-after").has_value()) << refused;
  // Token sign-in from the same address counts against the same limit.
  auto by_token =
      podium().anonymous().post("/api/v1/auth/login", {{"token", podium().server().admin_token()}});
  EXPECT_TRUE(is_problem(by_token, 429)) << by_token;
}

// A secret a client sends, right or wrong, is never echoed in an answer nor written to the
// server's log (the access log has no headers, bodies or query strings).
TEST_F(LoginSecurity, TokensAndPasswordsAreNeverEchoedOrLogged) {
  const std::string wrong_token = "pdm_wrong_token_" + random_hex();
  const std::string password = "pw-" + random_hex();
  const std::string wrong_password = "wrong-" + random_hex();
  podium().create_user("member", password, "ivan");
  const std::string worker_token = podium().worker_token(
      podium().create_cluster(unique_name("c"), "cpu-1")["name"].get<std::string>());
  std::vector<Reply> replies = {
      podium().as(wrong_token).get("/api/v1/runs"),
      podium().as(worker_token).get("/api/v1/runs"),  // a worker token outside /agent: 403
      podium().anonymous().post("/api/v1/auth/login", {{"token", wrong_token}}),
      login(podium(), "ivan", wrong_password),
      podium().anonymous().call("GET", "/api/v1/runs?token=" + wrong_token),
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr,
                                {{"Cookie", "podium_session=" + wrong_token}}),
  };
  auto ok = login(podium(), "ivan", password);
  ASSERT_EQ(ok.status, 200) << ok;
  const auto cookie = ok.header("set-cookie").value_or("");
  const std::string session = cookie.substr(0, cookie.find(';'));
  const std::string session_id = session.substr(session.find('=') + 1);
  replies.push_back(
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", session}}));
  for (const auto& r : replies) {
    EXPECT_GE(r.status, 200) << r;
    for (const auto& secret : {wrong_token, worker_token, password, wrong_password, session_id})
      EXPECT_EQ(r.body.find(secret), std::string::npos) << "an answer echoes a secret: " << r;
  }
  const std::string log = podium().server().log();
  ASSERT_FALSE(log.empty());
  for (const auto& secret : {wrong_token, worker_token, password, wrong_password, session_id,
                             podium().server().admin_token()})
    EXPECT_EQ(log.find(secret), std::string::npos)
        << "the server's log contains a secret starting " << secret.substr(0, 8);
}

class LoginSecurityBehindHttps : public PodiumTest {
 protected:
  // TLS ends at a proxy in front of the server: the browser talks https, the server http.
  Podium::Options options() const override {
    return {.settings = {"public_url=https://podium.example.com"}};
  }
};

TEST_F(LoginSecurityBehindHttps, CookieIsSecureWhenPublicUrlIsHttps) {
  podium().create_user("member", std::string("s3cret-pass"), "heidi");
  auto r = login(podium(), "heidi", "s3cret-pass");
  ASSERT_EQ(r.status, 200) << r;
  const auto cookie = r.header("set-cookie").value_or("");
  EXPECT_NE(cookie.find("; Secure"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  const auto session = cookie.substr(0, cookie.find(';'));
  auto logout =
      podium().anonymous().call("POST", "/api/v1/auth/logout", nullptr, {{"Cookie", session}});
  EXPECT_EQ(logout.status, 204) << logout;
  EXPECT_NE(logout.header("set-cookie").value_or("").find("; Secure"), std::string::npos) << logout;
}

}  // namespace
}  // namespace podium::it
