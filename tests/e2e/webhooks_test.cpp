// Issue 30 point 2 acceptance: a local webhook receiver (allowed in webhooks.allow_hosts) gets
// run.started and run.succeeded of a short reference run, signed; with the receiver down when
// the events happen and the server killed (SIGKILL) before it could deliver them, the deliveries
// arrive after the server restarts, exactly once per event id.

#include <signal.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "tests/e2e/support/e2e.h"
#include "tests/integration/support/webhook_receiver.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class Webhooks : public E2eTest {
 protected:
  // Fast polls and short retries so that the test takes seconds; the restarted server keeps its
  // port (the agents keep their --server URL).
  Settings settings() const override {
    return {.extra = {"webhooks.allow_hosts=127.0.0.1", "webhooks.poll_interval_ms=100",
                      "webhooks.retry_first_delay_ms=300", "webhooks.retry_max_delay_seconds=1"},
            .fixed_port = true};
  }

  // POST /api/v1/webhooks as admin for `events`; returns {id, secret}.
  std::pair<std::string, std::string> subscribe(const it::WebhookReceiver& rx, const json& events) {
    const it::Reply r = admin().post("/api/v1/webhooks", {{"url", rx.url()}, {"events", events}});
    if (r.status != 201) ADD_FAILURE() << r;
    return {r.json.value("id", ""), r.json.value("secret", "")};
  }

  // The deliveries of a webhook (GET /webhooks/{id}/deliveries items).
  json deliveries(const std::string& webhook) {
    const it::Reply r = admin().get("/api/v1/webhooks/" + webhook + "/deliveries");
    EXPECT_EQ(r.status, 200) << r;
    return r.json.value("items", json::array());
  }
};

// {event id -> how many times received}, and the bodies by type for `run_id`.
std::map<std::string, int> ids_received(const std::vector<it::ReceivedRequest>& got) {
  std::map<std::string, int> n;
  for (const auto& r : got) ++n[json::parse(r.body).value("id", "")];
  return n;
}

std::map<std::string, json> bodies_of_run(const std::vector<it::ReceivedRequest>& got,
                                          const std::string& run_id) {
  std::map<std::string, json> out;
  for (const auto& r : got) {
    const json b = json::parse(r.body);
    if (b["run"].value("id", "") == run_id) out[b.value("type", "")] = b;
  }
  return out;
}

TEST_F(Webhooks, ReceiverGetsSignedEventsAndNothingIsLostWhenTheServerDies) {
  it::WebhookReceiver rx;
  const auto [webhook, secret] = subscribe(rx, json::array({"run.started", "run.succeeded"}));
  ASSERT_FALSE(secret.empty());

  const auto cluster = create_cluster("cpu-1", 1);
  start_workers(cluster, 1, 1);
  const auto ds = dataset();
  const json run = submit(reference_spec(unique_name("hook"), cluster, ds,
                                         {.steps = 10,
                                          .per_device_batch_size = 2,
                                          .max_target_length = 64,
                                          .checkpoint_period = 5,
                                          .max_restarts = 0}));
  const std::string id = run["id"];
  ASSERT_TRUE(wait_for_state(id, "succeeded", 240s));
  ASSERT_TRUE(rx.wait_for(2, 30s)) << deliveries(webhook).dump(1);
  {
    const auto got = rx.requests();
    for (const auto& r : got)
      EXPECT_TRUE(it::verify_podium_signature(secret, r)) << r.headers.at("podium-signature");
    const auto bodies = bodies_of_run(got, id);
    ASSERT_TRUE(bodies.count("run.started")) << deliveries(webhook).dump(1);
    ASSERT_TRUE(bodies.count("run.succeeded")) << deliveries(webhook).dump(1);
    EXPECT_EQ(bodies.at("run.succeeded")["run"]["last_step"], 9);
    EXPECT_EQ(bodies.at("run.succeeded")["run"]["state"], "succeeded");
    EXPECT_NE(bodies.at("run.succeeded")["text"].get<std::string>().find("succeeded at step 9"),
              std::string::npos)
        << bodies.at("run.succeeded");
  }

  // The receiver is down while a second run starts and succeeds: the server tries, fails and
  // schedules retries; then it is killed before any retry could succeed.
  rx.stop();
  const json second = submit(command_spec(unique_name("hook2"), cluster, {"true"}));
  const std::string id2 = second["id"];
  ASSERT_TRUE(wait_for_state(id2, "succeeded", 120s));
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& d : deliveries(webhook))
          if (d.value("run_id", "") == id2 && d.value("type", "") == "run.succeeded" &&
              !d["attempts"].empty())
            return true;
        return false;
      },
      30s))
      << deliveries(webhook).dump(1);
  EXPECT_EQ(podium().server().kill(), 128 + SIGKILL);
  rx.start();
  podium().server().start();

  // After the restart, each of the second run's events arrives, once.
  ASSERT_TRUE(eventually(
      [&] {
        const auto b = bodies_of_run(rx.requests(), id2);
        return b.count("run.succeeded") == 1;
      },
      60s))
      << deliveries(webhook).dump(1);
  std::this_thread::sleep_for(2s);  // time for a wrongly repeated delivery to show up
  const auto got = rx.requests();
  for (const auto& [event_id, times] : ids_received(got))
    EXPECT_EQ(times, 1) << "event " << event_id << " delivered " << times << " times";
  for (const auto& r : got) EXPECT_TRUE(it::verify_podium_signature(secret, r));
  // The log shows the failed attempts before the restart and the one that succeeded after.
  for (const auto& d : deliveries(webhook)) {
    EXPECT_EQ(d.value("state", ""), "delivered") << d.dump(1);
    if (d.value("run_id", "") != id2) continue;
    ASSERT_GE(d["attempts"].size(), 2u) << d.dump(1);
    EXPECT_TRUE(d["attempts"][0]["http_status"].is_null()) << d.dump(1);
    EXPECT_EQ(d["attempts"].back()["http_status"], 200) << d.dump(1);
  }
}

}  // namespace
}  // namespace podium::e2e
