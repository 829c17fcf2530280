// The webhook API through a real podium-server (issue 30 point 2 acceptance): targets at
// loopback or at the metadata server are refused with problem+json 422 unless allowed in
// webhooks.allow_hosts; the secret is shown once; members see their own webhooks, admins every
// one; a run's events reach the receiver, signed, retried with backoff after a failure, and the
// delivery log (GET /webhooks/{id}/deliveries) shows each attempt.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "tests/integration/support/hand_agent.h"
#include "tests/integration/support/webhook_receiver.h"

namespace podium::it {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const json kStarted = json::array({"run.started"});

// The field errors of a problem+json answer, as "field: message" lines.
std::string field_errors(const Reply& r) {
  std::string out;
  if (r.json.is_object() && r.json.contains("errors") && r.json["errors"].is_array())
    for (const auto& e : r.json["errors"])
      out += e.value("field", "") + ": " + e.value("message", "") + "\n";
  return out;
}

class WebhooksNotAllowed : public PodiumTest {};

TEST_F(WebhooksNotAllowed, InternalTargetsAreRefused) {
  const Api admin = podium().admin();
  for (const std::string url :
       {"http://127.0.0.1:9/hook", "https://127.0.0.1/hook", "https://169.254.169.254/latest/",
        "http://169.254.169.254/latest/", "https://[::1]/hook", "https://10.0.0.8/hook",
        "https://100.64.0.1/", "https://[fd00:ec2::254]/", "https://metadata.google.internal/",
        "https://localhost/hook"}) {
    const Reply r = admin.post("/api/v1/webhooks", {{"url", url}, {"events", kStarted}});
    EXPECT_EQ(r.status, 422) << url << "\n" << r;
    EXPECT_EQ(r.content_type(), "application/problem+json") << r;
    EXPECT_NE(field_errors(r).find("url: "), std::string::npos) << url << "\n" << r;
  }
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM webhooks"), "0");
}

TEST_F(WebhooksNotAllowed, BadInputIsAProblemNotACrash) {
  const Api admin = podium().admin();
  EXPECT_EQ(admin.post("/api/v1/webhooks", {{"events", kStarted}}).status, 400);
  EXPECT_EQ(admin.post("/api/v1/webhooks", {{"url", 5}, {"events", kStarted}}).status, 400);
  EXPECT_EQ(
      admin.post("/api/v1/webhooks", {{"url", "https://x.example"}, {"events", "run.x"}}).status,
      400);
  EXPECT_EQ(admin.post("/api/v1/webhooks", {{"url", "https://x.example"}, {"extra", 1}}).status,
            400);
  const Reply unknown = admin.post("/api/v1/webhooks", {{"url", "https://x.example"},
                                                        {"events", json::array({"run.exploded"})}});
  EXPECT_EQ(unknown.status, 422) << unknown;
  EXPECT_NE(field_errors(unknown).find("events: unknown event 'run.exploded'"), std::string::npos)
      << unknown;
  EXPECT_EQ(
      admin.post("/api/v1/webhooks", {{"url", "https://x.example"}, {"events", json::array()}})
          .status,
      422);
  EXPECT_EQ(
      admin.post("/api/v1/webhooks", {{"url", "ftp://x.example/"}, {"events", kStarted}}).status,
      422);
  EXPECT_EQ(podium().anonymous().get("/api/v1/webhooks").status, 401);
  EXPECT_EQ(admin.get("/api/v1/webhooks/whk_nope/deliveries").status, 404);
  EXPECT_EQ(admin.del("/api/v1/webhooks/whk_nope").status, 404);
}

class Webhooks : public PodiumTest {
 protected:
  Podium::Options options() const override {
    return {.settings = {"webhooks.allow_hosts=127.0.0.1", "webhooks.poll_interval_ms=100",
                         "webhooks.retry_first_delay_ms=300"}};
  }
};

TEST_F(Webhooks, AllowedHostsMayBeCalledOverHttp) {
  WebhookReceiver rx;
  const Reply r =
      podium().admin().post("/api/v1/webhooks", {{"url", rx.url()}, {"events", kStarted}});
  ASSERT_EQ(r.status, 201) << r;
  EXPECT_EQ(r.json["secret"].get<std::string>().rfind("whsec_", 0), 0u) << r;
  EXPECT_EQ(r.json["url"], rx.url());
  EXPECT_EQ(r.json["events"], kStarted);
  // Allowing 127.0.0.1 allows no other internal address.
  EXPECT_EQ(
      podium()
          .admin()
          .post("/api/v1/webhooks", {{"url", "http://169.254.169.254/"}, {"events", kStarted}})
          .status,
      422);
}

TEST_F(Webhooks, MembersSeeTheirOwnAdminsSeeAll) {
  WebhookReceiver rx;
  const User alice = podium().create_user("member");
  const User bob = podium().create_user("member");
  const User viewer = podium().create_user("viewer");
  const Reply a = alice.api.post("/api/v1/webhooks", {{"url", rx.url()}, {"events", kStarted}});
  ASSERT_EQ(a.status, 201) << a;
  const std::string id = a.json["id"];
  const Reply b = bob.api.post("/api/v1/webhooks", {{"url", rx.url()}, {"events", kStarted}});
  ASSERT_EQ(b.status, 201) << b;
  EXPECT_EQ(viewer.api.post("/api/v1/webhooks", {{"url", rx.url()}, {"events", kStarted}}).status,
            403);

  const Reply mine = alice.api.get("/api/v1/webhooks");
  ASSERT_EQ(mine.status, 200) << mine;
  ASSERT_EQ(mine.json["items"].size(), 1u) << mine;
  EXPECT_EQ(mine.json["items"][0]["id"], id);
  EXPECT_EQ(mine.json["items"][0]["owner"], alice.username);
  EXPECT_FALSE(mine.json["items"][0].contains("secret")) << "the secret is shown once";
  const Reply all = podium().admin().get("/api/v1/webhooks");
  EXPECT_EQ(all.json["items"].size(), 2u) << all;

  // Another member's webhook does not exist for bob.
  EXPECT_EQ(bob.api.get("/api/v1/webhooks/" + id + "/deliveries").status, 404);
  EXPECT_EQ(bob.api.del("/api/v1/webhooks/" + id).status, 404);
  EXPECT_EQ(alice.api.get("/api/v1/webhooks/" + id + "/deliveries").status, 200);
  EXPECT_EQ(podium().admin().get("/api/v1/webhooks/" + id + "/deliveries").status, 200);
  EXPECT_EQ(alice.api.del("/api/v1/webhooks/" + id).status, 204);
  EXPECT_EQ(alice.api.get("/api/v1/webhooks").json["items"].size(), 0u);
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM webhooks WHERE secret <> ''"), "1");
}

TEST_F(Webhooks, DeliveryLogShowsEachAttempt) {
  WebhookReceiver rx(503);
  const Reply created = podium().admin().post(
      "/api/v1/webhooks",
      {{"url", rx.url()}, {"events", json::array({"run.started", "run.succeeded"})}});
  ASSERT_EQ(created.status, 201) << created;
  const std::string id = created.json["id"];
  const std::string secret = created.json["secret"];

  const std::string cluster = unique_name("wh");
  podium().create_cluster(cluster, "cpu-1");
  HandAgent agent(podium(), cluster, HandAgent::Host{});
  const std::string run_id = podium().submit_run(podium().admin(), cluster)["id"];
  const std::string attempt = agent.next_attempt();
  agent.report(attempt, "running");

  // The receiver fails twice (503), then accepts.
  ASSERT_TRUE(rx.wait_for(2, 20s)) << rx.requests().size();
  rx.set_status(200);
  ASSERT_TRUE(rx.wait_for(3, 20s));
  const auto got = rx.requests();
  for (const auto& r : got) EXPECT_TRUE(verify_podium_signature(secret, r));
  const json body = json::parse(got.back().body);
  EXPECT_EQ(body["type"], "run.started");
  EXPECT_EQ(body["run"]["id"], run_id);
  EXPECT_EQ(json::parse(got.front().body)["id"], body["id"]) << "the same event id on a retry";

  Reply log;
  ASSERT_TRUE([&] {
    for (int i = 0; i < 100; ++i) {
      log = podium().admin().get("/api/v1/webhooks/" + id + "/deliveries");
      if (log.status == 200 && log.json["items"].size() == 1 &&
          log.json["items"][0]["state"] == "delivered")
        return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }()) << log;
  const json d = log.json["items"][0];
  EXPECT_EQ(d["event_id"], body["id"]);
  EXPECT_EQ(d["type"], "run.started");
  EXPECT_EQ(d["run_id"], run_id);
  EXPECT_TRUE(d["next_attempt_at"].is_null()) << d;
  ASSERT_EQ(d["attempts"].size(), 3u) << d;
  EXPECT_EQ(d["attempts"][0]["http_status"], 503);
  EXPECT_EQ(d["attempts"][0]["error"], "answered HTTP 503");
  EXPECT_TRUE(d["attempts"][0]["next_attempt_at"].is_string()) << d;
  EXPECT_EQ(d["attempts"][1]["http_status"], 503);
  EXPECT_EQ(d["attempts"][2]["http_status"], 200);
  EXPECT_TRUE(d["attempts"][2]["next_attempt_at"].is_null()) << d;
  // The second retry waited longer than the first (300 ms, then 600 ms, each times 0.5..1).
  EXPECT_GT(d["attempts"][1]["at"].get<std::string>(), d["attempts"][0]["at"].get<std::string>());
}

}  // namespace
}  // namespace podium::it
