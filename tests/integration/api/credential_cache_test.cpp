// Servers keep verified tokens and sessions in memory (auth.credential_cache_seconds). What a
// user relies on: revoking, disabling, demoting, signing out and registering a host again count
// from the next request on the server that took the change, and on every other replica once
// NOTIFY podium_auth arrives, also when the change was made with SQL. The servers here keep
// entries for 60 s, so a change seen within the 5 s these tests wait came by notification.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::vector<std::string> kLongCache = {"auth.credential_cache_seconds=60"};

// Polls until `api` answers `path` with `status` (true), or 5 s passed (false).
bool eventually(const std::function<int()>& status_now, int status) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (status_now() == status) return true;
    std::this_thread::sleep_for(20ms);
  }
  return status_now() == status;
}

int me(const Api& api) {
  return api.get("/api/v1/auth/me").status;
}

// Twice: the second answer may come from the cache, which is what the test then has to end.
void use_twice(const Api& api, const std::string& what) {
  for (int i = 0; i < 2; ++i) ASSERT_EQ(me(api), 200) << what;
}

TEST(CredentialCache, ATokenAlreadyVerifiedAnswersWithoutReadingItsTable) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto alice = p.create_user("member");
  auto bob = p.create_user("member");
  use_twice(alice.api, "alice");
  // No trigger fires on DDL: the cache is not told, and bob's token, never seen, must be read.
  p.db().query("ALTER TABLE api_tokens RENAME TO api_tokens_away");
  const int alice_status = me(alice.api);
  const int bob_status = me(bob.api);
  p.db().query("ALTER TABLE api_tokens_away RENAME TO api_tokens");
  EXPECT_EQ(alice_status, 200) << "a verified token read the database again";
  EXPECT_NE(bob_status, 200) << "a token never seen was answered without the database";
  EXPECT_EQ(me(bob.api), 200);
}

TEST(CredentialCache, ARevokedTokenIsRefusedAtOnceHereAndByTheOtherReplica) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto second = p.second_server("server-b", kLongCache);
  auto user = p.create_user("member");
  auto minted = require_status(user.api.post("/api/v1/tokens", {{"name", "ci"}}), 201);
  const std::string token = minted.json["token"];
  const Api here = p.as(token), there(second->url(), token);
  use_twice(here, "here");
  use_twice(there, "there");

  require_status(user.api.del("/api/v1/tokens/" + minted.json["id"].get<std::string>()), 204);
  EXPECT_EQ(me(here), 401) << "the replica that revoked it still accepts it";
  EXPECT_TRUE(eventually([&] { return me(there); }, 401))
      << "the other replica accepts a revoked token 5 s later";
  EXPECT_EQ(me(user.api), 200) << "the user's other token goes on working";
}

TEST(CredentialCache, ChangesMadeWithSqlReachEveryServer) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto second = p.second_server("server-b", kLongCache);
  auto eve = p.create_user("member");
  auto finn = p.create_user("member");
  const Api eve_there(second->url(), eve.token), finn_there(second->url(), finn.token);
  use_twice(eve.api, "eve");
  use_twice(eve_there, "eve on b");
  use_twice(finn.api, "finn");
  use_twice(finn_there, "finn on b");

  // What the runbook's SQL would do: disable a user, revoke a token by hand.
  p.db().query("UPDATE users SET disabled = true WHERE id = $1", {eve.id});
  p.db().query("UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1", {finn.id});
  EXPECT_TRUE(eventually([&] { return me(eve.api); }, 401));
  EXPECT_TRUE(eventually([&] { return me(eve_there); }, 401));
  EXPECT_TRUE(eventually([&] { return me(finn.api); }, 401));
  EXPECT_TRUE(eventually([&] { return me(finn_there); }, 401));
}

TEST(CredentialCache, ADemotedUserLosesWriteAccessOnEveryReplica) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto second = p.second_server("server-b", kLongCache);
  auto gus = p.create_user("member");
  const Api here = gus.api, there(second->url(), gus.token);
  // A member's write with an empty body is a 400 (authorized, then validated); a viewer's a 403.
  auto write = [](const Api& a) { return a.post("/api/v1/datasets", json::object()).status; };
  ASSERT_NE(write(here), 403);
  ASSERT_NE(write(there), 403);

  require_status(p.admin().patch("/api/v1/users/" + gus.id, {{"role", "viewer"}}), 200);
  EXPECT_EQ(write(here), 403) << "demoted on this replica, still writing";
  EXPECT_TRUE(eventually([&] { return write(there); }, 403));
  EXPECT_EQ(me(there), 200) << "a viewer still reads";
}

TEST(CredentialCache, ASignedOutSessionIsRefusedOnEveryReplica) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto second = p.second_server("server-b", kLongCache);
  auto hana = p.create_user("member", std::string("s3cret-pass"));
  auto login =
      require_status(p.anonymous().post("/api/v1/auth/login",
                                        {{"username", hana.username}, {"password", "s3cret-pass"}}),
                     200);
  const std::string set_cookie = login.header("set-cookie").value_or("");
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  ASSERT_EQ(cookie.rfind("podium_session=", 0), 0u) << set_cookie;
  auto me_with_cookie = [&](const std::string& url) {
    return Api(url).call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", cookie}}).status;
  };
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(me_with_cookie(p.url()), 200);
    ASSERT_EQ(me_with_cookie(second->url()), 200);
  }

  require_status(
      Api(second->url()).call("POST", "/api/v1/auth/logout", nullptr, {{"Cookie", cookie}}), 204);
  EXPECT_EQ(me_with_cookie(second->url()), 401) << "signed out here, still signed in";
  EXPECT_TRUE(eventually([&] { return me_with_cookie(p.url()); }, 401));
}

TEST(CredentialCache, AHostRegisteredAgainRefusesItsOldCredentialOnEveryReplica) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium p(Podium::Options{kLongCache});
  auto second = p.second_server("server-b", kLongCache);
  const std::string cluster = unique_name("cc");
  p.create_cluster(cluster, "cpu-1");
  const std::string token = p.worker_token(cluster);
  // A new agent process of the host proves it with the credential it found in its workdir.
  auto reg = [&](const std::string& instance, const std::string& credential) {
    json body = {{"cluster", cluster}, {"slice", 0}, {"host", 0}, {"instance", instance}};
    if (!credential.empty()) body["credential"] = credential;
    return require_status(p.as(token).post("/api/v1/agent/register", body), 200).json;
  };
  const json first = reg("agent-1", "");
  const std::string worker = first["worker_id"], old_credential = first["credential"];
  auto heartbeat = [&](const std::string& url, const std::string& credential) {
    return Api(url, credential).post("/api/v1/agent/heartbeat", {{"worker_id", worker}}).status;
  };
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(heartbeat(p.url(), old_credential), 200);
    ASSERT_EQ(heartbeat(second->url(), old_credential), 200);
  }

  // Another agent process takes the host over through this replica.
  const json taken = reg("agent-2", old_credential);
  ASSERT_EQ(taken["worker_id"], worker);
  EXPECT_EQ(heartbeat(p.url(), old_credential), 401);
  EXPECT_TRUE(eventually([&] { return heartbeat(second->url(), old_credential); }, 401));
  EXPECT_EQ(heartbeat(second->url(), taken["credential"]), 200);
}

}  // namespace
}  // namespace podium::it
