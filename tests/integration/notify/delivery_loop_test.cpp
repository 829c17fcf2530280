// The webhook outbox and its delivery loop on a real PostgreSQL (migrations/0021_webhooks.sql,
// backend/notify/delivery_loop.h), driven with an injected clock and jitter: which run events
// become which deliveries (and for whom), the exact retry schedule, giving up after 24 h, the
// SSRF guard at delivery time, signatures, the same event id on every retry, and SKIP LOCKED.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "backend/db/migrations.h"
#include "backend/notify/delivery_loop.h"
#include "tests/integration/db/scratch_database.h"
#include "tests/integration/support/webhook_receiver.h"

namespace podium::notify {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using SysClock = std::chrono::system_clock;

class DeliveryLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db::testing::test_database_url()) GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set";
    scratch_ = std::make_unique<db::testing::ScratchDatabase>();
    db::PoolOptions o;
    o.conninfo = scratch_->conninfo();
    o.max_connections = 4;
    db_ = std::make_unique<db::Database>(o);
    db::apply_migrations(*db_, db::embedded_migrations());
    exec(
        "INSERT INTO users (id, username, role) VALUES ('usr_admin', 'root', 'admin'), "
        "('usr_a', 'alice', 'member'), ('usr_b', 'bob', 'member')");
    settings_.allow = AllowList({"127.0.0.1"});
    settings_.http.connect_timeout = 2s;
    settings_.http.total_timeout = 3s;
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }

  db::Result exec(const std::string& sql, const db::Params& params = {}) {
    return db_->transact([&](db::Transaction& tx) { return tx.exec(sql, params); });
  }
  std::string value(const std::string& sql, const db::Params& params = {}) {
    auto r = exec(sql, params);
    return r.empty() || r.is_null(0, r.column_name(0)) ? "" : r.at(0, r.column_name(0));
  }
  void add_webhook(const std::string& id, const std::string& owner, const std::string& url,
                   const std::string& events_json) {
    exec(
        "INSERT INTO webhooks (id, owner_id, url, events, secret) VALUES ($1, $2, $3, "
        "ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), $5)",
        {id, owner, url, events_json, "whsec_" + id});
  }
  void add_run(const std::string& id, const std::string& owner) {
    exec(
        "INSERT INTO runs (id, name, owner_id, workload, spec, state) VALUES ($1, $1, $2, "
        "'command', '{}', 'queued')",
        {id, owner});
  }
  // A run_events row as the lifecycle writes it; returns its id.
  std::string event(const std::string& run, const std::string& from, const std::string& to,
                    const std::string& kind = "state", const std::string& cause = "") {
    return value(
        "INSERT INTO run_events (run_id, from_state, to_state, cause, kind) VALUES ($1, $2, $3, "
        "$4, $5) RETURNING id",
        {run, from.empty() ? db::Param() : db::Param(from), to, cause, kind});
  }
  // The delivery types of one webhook, in event order.
  std::vector<std::string> types_for(const std::string& webhook) {
    auto r = exec(
        "SELECT event_type FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY "
        "event_id",
        {webhook});
    std::vector<std::string> out;
    for (size_t i = 0; i < r.size(); ++i) out.push_back(r.at(i, "event_type"));
    return out;
  }
  SysClock::time_point event_time(const std::string& delivery_where) {
    const auto us = std::stoll(
        value("SELECT (extract(epoch FROM created_at) * 1000000)::bigint FROM webhook_deliveries "
              "WHERE " +
              delivery_where));
    return SysClock::time_point(
        std::chrono::duration_cast<SysClock::duration>(std::chrono::microseconds(us)));
  }
  static long long us(SysClock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  }
  // The next_attempt_at of every attempt of the only delivery, as epoch microseconds (-1 for
  // null).
  std::vector<long long> scheduled() {
    auto r = exec(
        "SELECT (extract(epoch FROM next_attempt_at) * 1000000)::bigint AS us FROM "
        "webhook_attempts ORDER BY id");
    std::vector<long long> out;
    for (size_t i = 0; i < r.size(); ++i) out.push_back(r.is_null(i, "us") ? -1 : r.int64(i, "us"));
    return out;
  }

  DeliveryPass pass_at(SysClock::time_point t, double draw = 1.0) {
    return deliver_one(
        *db_, settings_, [t] { return t; }, [draw] { return draw; });
  }

  std::unique_ptr<db::testing::ScratchDatabase> scratch_;
  std::unique_ptr<db::Database> db_;
  DeliverySettings settings_;
};

// A port nothing listens on: a receiver that is down.
int closed_port() {
  it::WebhookReceiver rx;
  const int port = rx.port();
  rx.stop();
  return port;
}

TEST_F(DeliveryLoopTest, EventsBecomeTheTypesTheirWebhooksWant) {
  const std::string all =
      R"(["run.started","run.succeeded","run.failed","run.stalled","run.preempted",)"
      R"("run.recovered","run.underperforming","run.refused"])";
  add_webhook("whk_alice", "usr_a", "https://hooks.example.com/a", all);
  add_webhook("whk_bob", "usr_b", "https://hooks.example.com/b", all);
  add_webhook("whk_root", "usr_admin", "https://hooks.example.com/r", all);
  add_webhook("whk_alice_fail", "usr_a", "https://hooks.example.com/f", R"(["run.failed"])");
  add_run("run_1", "usr_a");
  event("run_1", "", "queued");                             // creation: nothing
  event("run_1", "queued", "starting");                     // not subscribable
  event("run_1", "starting", "running");                    // run.started
  event("run_1", "running", "running", "state", "a note");  // a note: nothing
  event("run_1", "running", "running", "stalled", "no step for 300 s");
  event("run_1", "running", "running", "underperforming", "2.0 of 367.2 TFLOP/s/device");
  // The attempt that ended was preempted: run.preempted.
  exec(
      "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
      "coordinator_port, failure_class) VALUES ('att_1', 'run_1', 1, 'failed', 1, 1, '{0}', 1, "
      "'preempted')");
  event("run_1", "running", "recovering");
  event("run_1", "recovering", "starting");
  event("run_1", "starting", "running");  // after a recovery: run.recovered
  // A restart after a code error is no preemption: no event at recovering.
  exec(
      "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
      "coordinator_port, failure_class) VALUES ('att_2', 'run_1', 2, 'failed', 1, 1, '{0}', 2, "
      "'code_error')");
  event("run_1", "running", "recovering");
  event("run_1", "recovering", "failed");  // run.failed
  add_run("run_2", "usr_a");
  event("run_2", "queued", "failed", "state", "refused by its compile check");  // run.refused
  add_run("run_3", "usr_a");
  event("run_3", "starting", "running");
  event("run_3", "running", "succeeded");  // run.succeeded

  const std::vector<std::string> alice = {"run.started",   "run.stalled",   "run.underperforming",
                                          "run.preempted", "run.recovered", "run.failed",
                                          "run.refused",   "run.started",   "run.succeeded"};
  EXPECT_EQ(types_for("whk_alice"), alice);
  EXPECT_EQ(types_for("whk_root"), alice) << "an admin's webhook hears of every run";
  EXPECT_TRUE(types_for("whk_bob").empty()) << "a member's webhook hears of their own runs only";
  EXPECT_EQ(types_for("whk_alice_fail"), std::vector<std::string>{"run.failed"});
  // Each delivery is due at its event's time.
  EXPECT_EQ(value("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' AND "
                  "next_attempt_at = created_at"),
            std::to_string(alice.size() * 2 + 1));
}

TEST_F(DeliveryLoopTest, RolledBackEventsLeaveNoDelivery) {
  add_webhook("whk_a", "usr_a", "https://hooks.example.com/a", R"(["run.started"])");
  add_run("run_1", "usr_a");
  {
    auto tx = db_->begin();
    tx.exec(
        "INSERT INTO run_events (run_id, from_state, to_state) VALUES ('run_1', 'starting', "
        "'running')");
    // No commit: the event and its delivery go together.
  }
  EXPECT_EQ(value("SELECT count(*) FROM webhook_deliveries"), "0");
  event("run_1", "starting", "running");
  EXPECT_EQ(value("SELECT count(*) FROM webhook_deliveries"), "1");
}

TEST_F(DeliveryLoopTest, RetriesBackOffExponentiallyThenGiveUp) {
  add_webhook("whk_a", "usr_a", "http://127.0.0.1:" + std::to_string(closed_port()) + "/hook",
              R"(["run.started"])");
  add_run("run_1", "usr_a");
  event("run_1", "starting", "running");
  const auto t0 = event_time("true");
  settings_.retry.first_delay = 10s;
  settings_.retry.max_delay = 1h;
  settings_.retry.give_up_after = 24h;

  EXPECT_EQ(pass_at(t0 - 1s), DeliveryPass::idle) << "not due before its event";
  EXPECT_EQ(pass_at(t0 + 1s, 1.0), DeliveryPass::retry_scheduled);
  EXPECT_EQ(pass_at(t0 + 6s), DeliveryPass::idle) << "the retry is not due yet";
  EXPECT_EQ(pass_at(t0 + 11s, 1.0), DeliveryPass::retry_scheduled);
  // Jitter 0: half of the 40 s step.
  EXPECT_EQ(pass_at(t0 + 31s, 0.0), DeliveryPass::retry_scheduled);
  EXPECT_EQ(scheduled(), (std::vector<long long>{us(t0 + 11s), us(t0 + 31s), us(t0 + 51s)}));
  EXPECT_EQ(value("SELECT attempts FROM webhook_deliveries"), "3");
  EXPECT_EQ(value("SELECT (extract(epoch FROM next_attempt_at) * 1000000)::bigint FROM "
                  "webhook_deliveries"),
            std::to_string(us(t0 + 51s)));
  // Every attempt is in the log with its error.
  auto attempts = exec("SELECT http_status, error FROM webhook_attempts ORDER BY id");
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_TRUE(attempts.is_null(0, "http_status"));
  EXPECT_NE(attempts.at(0, "error").find("cannot connect"), std::string::npos)
      << attempts.at(0, "error");

  // Near the end of the window the next retry would fall after it: given up, recorded.
  EXPECT_EQ(pass_at(t0 + 24h - 5s), DeliveryPass::given_up);
  EXPECT_EQ(value("SELECT state FROM webhook_deliveries"), "given_up");
  EXPECT_EQ(value("SELECT next_attempt_at FROM webhook_deliveries"), "");
  EXPECT_EQ(scheduled().back(), -1);
  EXPECT_EQ(pass_at(t0 + 48h), DeliveryPass::idle) << "a given-up delivery is not tried again";
}

TEST_F(DeliveryLoopTest, RefusesInternalTargetsAtDeliveryUnlessAllowed) {
  // Rows written behind the API's back (or allowed when created, and no longer): the delivery
  // loop judges again and never connects.
  add_webhook("whk_meta", "usr_a", "https://169.254.169.254/latest/meta-data/",
              R"(["run.started"])");
  add_webhook("whk_http", "usr_a", "http://127.0.0.1:9/hook", R"(["run.started"])");
  add_webhook("whk_loop", "usr_a", "https://127.0.0.1:9/hook", R"(["run.started"])");
  add_webhook("whk_gce", "usr_a", "https://metadata.google.internal/", R"(["run.started"])");
  add_run("run_1", "usr_a");
  event("run_1", "starting", "running");
  settings_.allow = AllowList();
  const auto t0 = event_time("webhook_id = 'whk_meta'");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pass_at(t0 + 1s), DeliveryPass::retry_scheduled);
  const auto error_of = [&](const std::string& webhook) {
    return value(
        "SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = "
        "a.delivery_id WHERE d.webhook_id = $1",
        {webhook});
  };
  EXPECT_NE(error_of("whk_meta").find("169.254.169.254 is cloud metadata server"),
            std::string::npos)
      << error_of("whk_meta");
  EXPECT_NE(error_of("whk_http").find("must use https"), std::string::npos) << error_of("whk_http");
  EXPECT_NE(error_of("whk_loop").find("127.0.0.1 is loopback"), std::string::npos)
      << error_of("whk_loop");
  EXPECT_NE(error_of("whk_gce").find("metadata server"), std::string::npos) << error_of("whk_gce");

  // Allowed explicitly, the loopback targets are called (and, nothing listening on port 9,
  // refused by the kernel); allowing 127.0.0.1 allows nothing else.
  settings_.allow = AllowList({"127.0.0.1"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pass_at(t0 + 1h), DeliveryPass::retry_scheduled);
  const auto last_error_of = [&](const std::string& webhook) {
    return value(
        "SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = "
        "a.delivery_id WHERE d.webhook_id = $1 ORDER BY a.id DESC LIMIT 1",
        {webhook});
  };
  EXPECT_NE(last_error_of("whk_http").find("cannot connect to 127.0.0.1:9"), std::string::npos)
      << last_error_of("whk_http");
  EXPECT_NE(last_error_of("whk_loop").find("cannot connect to 127.0.0.1:9"), std::string::npos)
      << last_error_of("whk_loop");
  EXPECT_NE(last_error_of("whk_meta").find("is cloud metadata server"), std::string::npos)
      << last_error_of("whk_meta");
  EXPECT_NE(last_error_of("whk_gce").find("metadata server"), std::string::npos)
      << last_error_of("whk_gce");
}

TEST_F(DeliveryLoopTest, DeliversSignedBodiesWithTheSameIdOnEveryRetry) {
  it::WebhookReceiver rx(500);
  add_webhook("whk_a", "usr_a", rx.url(), R"(["run.succeeded"])");
  add_run("run_1", "usr_a");
  exec("UPDATE runs SET last_step = 39, tags = '{a,b}' WHERE id = 'run_1'");
  const std::string event_id =
      event("run_1", "running", "succeeded", "state", "every rank exited 0");
  settings_.public_url = "https://podium.example";
  const auto now = [] { return SysClock::now(); };

  EXPECT_EQ(deliver_one(*db_, settings_, now, [] { return 0.0; }), DeliveryPass::retry_scheduled);
  exec("UPDATE webhook_deliveries SET next_attempt_at = now()");  // due again at once
  rx.set_status(204);
  EXPECT_EQ(deliver_one(*db_, settings_, now, [] { return 0.0; }), DeliveryPass::delivered);
  EXPECT_EQ(deliver_one(*db_, settings_, now, [] { return 0.0; }), DeliveryPass::idle);

  const auto got = rx.requests();
  ASSERT_EQ(got.size(), 2u);
  for (const auto& r : got) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hook");
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_TRUE(it::verify_podium_signature("whsec_whk_a", r)) << r.headers.at("podium-signature");
    EXPECT_FALSE(it::verify_podium_signature("whsec_other", r));
  }
  EXPECT_EQ(got[0].body, got[1].body) << "a retry sends the same body";
  const json body = json::parse(got[1].body);
  EXPECT_EQ(body["id"], "evt_" + event_id);
  EXPECT_EQ(body["type"], "run.succeeded");
  EXPECT_TRUE(body["created_at"].is_string());
  EXPECT_EQ(body["run"]["id"], "run_1");
  EXPECT_EQ(body["run"]["state"], "succeeded");
  EXPECT_EQ(body["run"]["owner"], "alice");
  EXPECT_EQ(body["run"]["last_step"], 39);
  EXPECT_EQ(body["run"]["tags"], json::array({"a", "b"}));
  EXPECT_EQ(body["run"]["url"], "https://podium.example/runs/run_1");
  EXPECT_EQ(body["text"],
            "Podium: run run_1 succeeded at step 39 <https://podium.example/runs/run_1>");

  auto log = exec(
      "SELECT http_status, error, next_attempt_at IS NULL AS last FROM "
      "webhook_attempts ORDER BY id");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log.at(0, "http_status"), "500");
  EXPECT_EQ(log.at(0, "error"), "answered HTTP 500");
  EXPECT_FALSE(log.boolean(0, "last"));
  EXPECT_EQ(log.at(1, "http_status"), "204");
  EXPECT_TRUE(log.is_null(1, "error"));
  EXPECT_TRUE(log.boolean(1, "last"));
  EXPECT_EQ(value("SELECT state FROM webhook_deliveries"), "delivered");
}

TEST_F(DeliveryLoopTest, ARowAnotherReplicaHoldsIsSkipped) {
  it::WebhookReceiver rx;
  add_webhook("whk_a", "usr_a", rx.url(), R"(["run.started"])");
  add_run("run_1", "usr_a");
  event("run_1", "starting", "running");
  const auto now = [] { return SysClock::now(); };
  const auto draw = [] { return 0.5; };
  {
    // Another replica is delivering it: its transaction holds the row.
    auto other = db_->begin();
    other.exec("SELECT id FROM webhook_deliveries FOR UPDATE");
    EXPECT_EQ(deliver_one(*db_, settings_, now, draw), DeliveryPass::idle);
  }  // that replica died: its transaction rolled back, the row is free again
  EXPECT_EQ(deliver_one(*db_, settings_, now, draw), DeliveryPass::delivered);
  EXPECT_EQ(rx.requests().size(), 1u);
}

TEST_F(DeliveryLoopTest, AResponseTooLargeOrTooSlowIsBounded) {
  // The receiver's answer is never read past the limit; a receiver that accepts and never
  // answers costs at most the total deadline.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);  // accepts (the kernel's backlog), never answers
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  add_webhook("whk_a", "usr_a", "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/",
              R"(["run.started"])");
  add_run("run_1", "usr_a");
  event("run_1", "starting", "running");
  settings_.http.total_timeout = 700ms;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(deliver_one(
                *db_, settings_, [] { return SysClock::now(); }, [] { return 0.5; }),
            DeliveryPass::retry_scheduled);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_NE(value("SELECT error FROM webhook_attempts").find("timed out"), std::string::npos)
      << value("SELECT error FROM webhook_attempts");
  ::close(fd);
}

}  // namespace
}  // namespace podium::notify
