// The HTTP layer's waits that hold no thread (Deferred responses, idle streams), its bounded
// handler queue and its heartbeat lane, against the real server on a loopback port.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/http/server.h"
#include "engine/client/http_client.h"

namespace podium::http {
namespace {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

// Waits under `key` for `timeout`; answers 200 "woken" when woken, 204 when the time passed.
class Poll final : public Deferred {
 public:
  Poll(std::string key, std::chrono::milliseconds timeout, std::function<bool()> fired = {})
      : key_(std::move(key)), timeout_(timeout), fired_(std::move(fired)) {}
  Wait wait() override { return {{key_}, timeout_, fired_}; }
  std::optional<Response> resume(bool timed_out) override {
    if (timed_out) return Response::empty(204);
    return Response::text(200, "woken");
  }

 private:
  std::string key_;
  std::chrono::milliseconds timeout_;
  std::function<bool()> fired_;
};

// "a", then nothing until woken under "s:1", then "b" and the end.
class TwoPartStream final : public BodyStream {
 public:
  bool next(std::string& chunk) override {
    ++calls;
    if (step_ == 0) {
      chunk = "a";
      step_ = 1;
      return true;
    }
    if (step_ == 1) {
      step_ = 2;
      return true;  // nothing now
    }
    chunk = "b";
    return false;
  }
  std::optional<Wait> idle() override { return Wait{{"s:1"}, 30s, {}}; }
  std::atomic<int> calls{0};

 private:
  int step_ = 0;
};

struct ParkedWaits : ::testing::Test {
  std::unique_ptr<HttpServer> server;
  std::mutex mu;
  std::condition_variable cv;
  bool release_slow = false;
  std::atomic<int> handled{0};
  std::shared_ptr<TwoPartStream> stream = std::make_shared<TwoPartStream>();

  void start(ServerOptions o) {
    o.port = 0;
    server = std::make_unique<HttpServer>(o, [this](Request& r) { return handle(r); });
    server->start();
  }
  void TearDown() override {
    {
      std::lock_guard lock(mu);
      release_slow = true;
    }
    cv.notify_all();
    if (server) server->stop(2s);
  }
  Response handle(Request& r) {
    ++handled;
    if (r.path == "/poll") return deferred(std::make_shared<Poll>("ch:k", 20s));
    if (r.path == "/poll-short") return deferred(std::make_shared<Poll>("ch:k", 200ms));
    if (r.path == "/poll-fired")
      return deferred(std::make_shared<Poll>("ch:never", 20s, [] { return true; }));
    if (r.path == "/poll-a1") return deferred(std::make_shared<Poll>("a:1", 20s));
    if (r.path == "/poll-a2") return deferred(std::make_shared<Poll>("a:2", 20s));
    if (r.path == "/poll-b1") return deferred(std::make_shared<Poll>("b:1", 20s));
    if (r.path == "/stream") {
      Response res;
      res.stream = stream;
      return res;
    }
    if (r.path == "/slow") {
      std::unique_lock lock(mu);
      cv.wait_for(lock, 20s, [&] { return release_slow; });
    }
    return Response::text(200, "fast");
  }
  static Response deferred(std::shared_ptr<Deferred> d) {
    Response res;
    res.deferred = std::move(d);
    return res;
  }
  client::HttpClient client() const {
    return client::HttpClient("http://127.0.0.1:" + std::to_string(server->port()));
  }
  std::future<client::HttpClient::Result> get_async(const std::string& path,
                                                    std::chrono::milliseconds timeout = 25s) {
    auto c = client();
    return std::async(std::launch::async, [c, path, timeout] {
      client::RequestOptions o;
      o.timeout = timeout;
      return c.get(path, o);
    });
  }
};

int status_of(const client::HttpClient::Result& r) {
  return r.response ? r.response->status : 0;
}

TEST_F(ParkedWaits, ParkedLongPollsHoldNoHandlerThreadAndAWakeUpAnswersThemAll) {
  ServerOptions o;
  o.handler_threads = 2;
  start(o);
  std::vector<std::future<client::HttpClient::Result>> polls;
  for (int i = 0; i < 24; ++i) polls.push_back(get_async("/poll"));
  ASSERT_TRUE(eventually([&] { return server->parked_waits() == 24; })) << server->parked_waits();
  // 24 waits on 2 handler threads, and an ordinary request is still answered at once.
  client::RequestOptions quick;
  quick.timeout = 3s;
  const auto fast = client().get("/fast", quick);
  ASSERT_EQ(status_of(fast), 200);
  EXPECT_EQ(fast.response->body, "fast");
  server->wake("ch", "k");
  for (auto& p : polls) {
    const auto r = p.get();
    ASSERT_EQ(status_of(r), 200);
    EXPECT_EQ(r.response->body, "woken");
  }
  EXPECT_EQ(server->parked_waits(), 0);
}

TEST_F(ParkedWaits, AWaitEndsByItsTimeoutOrAtOnceWhenItsWakeUpCameFirst) {
  start({});
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(status_of(client().get("/poll-short")), 204);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
  // fired() says a wake-up came before the wait was registered: no 20 s wait.
  client::RequestOptions quick;
  quick.timeout = 5s;
  const auto fired = client().get("/poll-fired", quick);
  ASSERT_EQ(status_of(fired), 200);
  EXPECT_EQ(fired.response->body, "woken");
}

TEST_F(ParkedWaits, WakeUpsReachTheirKeyTheirChannelOrEverything) {
  start({});
  auto a1 = get_async("/poll-a1");
  auto a2 = get_async("/poll-a2");
  auto b1 = get_async("/poll-b1");
  ASSERT_TRUE(eventually([&] { return server->parked_waits() == 3; }));
  server->wake("a", "2");
  EXPECT_EQ(status_of(a2.get()), 200);
  EXPECT_EQ(a1.wait_for(300ms), std::future_status::timeout);
  server->wake("a", "*");
  EXPECT_EQ(status_of(a1.get()), 200);
  EXPECT_EQ(b1.wait_for(300ms), std::future_status::timeout);
  server->wake("", "");
  EXPECT_EQ(status_of(b1.get()), 200);
}

TEST_F(ParkedWaits, AFullQueueIsRefusedAtOnceWhileHeartbeatsKeepTheirLane) {
  // The lane is the route's: the server reads it from the route table (it calls no handler
  // of the table here; handle() answers every request).
  Router routes;
  routes.add("GET", "/heartbeat", Access::open, {}, liveness_lane());
  ServerOptions o;
  o.handler_threads = 2;
  o.max_queued_requests = 1;
  o.routes = &routes;
  start(o);
  // One at a time: a second request arriving before the first left the queue would find it full.
  auto s1 = get_async("/slow");
  ASSERT_TRUE(eventually([&] { return handled.load() == 1; }));
  auto s2 = get_async("/slow");
  ASSERT_TRUE(eventually([&] { return handled.load() == 2; }));  // both threads blocked
  auto s3 = get_async("/slow");
  ASSERT_TRUE(eventually([&] { return server->queued_requests() == 1; }));
  client::RequestOptions quick;
  quick.timeout = 3s;
  const auto started = std::chrono::steady_clock::now();
  const auto refused = client().get("/slow", quick);
  ASSERT_EQ(status_of(refused), 503);
  EXPECT_EQ(refused.response->header("retry-after"), "1");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  // The heartbeat lane answers while every handler thread is busy and the queue is full.
  const auto beat = client().get("/heartbeat", quick);
  ASSERT_EQ(status_of(beat), 200);
  {
    std::lock_guard lock(mu);
    release_slow = true;
  }
  cv.notify_all();
  EXPECT_EQ(status_of(s1.get()), 200);
  EXPECT_EQ(status_of(s2.get()), 200);
  EXPECT_EQ(status_of(s3.get()), 200);
}

TEST_F(ParkedWaits, AnIdleStreamWaitsWithoutAThreadUntilWoken) {
  ServerOptions o;
  o.handler_threads = 2;
  start(o);
  auto r = get_async("/stream");
  ASSERT_TRUE(eventually([&] { return server->parked_waits() == 1; }));
  const int calls = stream->calls.load();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(stream->calls.load(), calls) << "the stream is polled instead of parked";
  server->wake("s", "1");
  const auto done = r.get();
  ASSERT_EQ(status_of(done), 200);
  EXPECT_EQ(done.response->body, "ab");
}

TEST_F(ParkedWaits, StoppingAnswersParkedWaitsInsteadOfLeavingThemHanging) {
  start({});
  auto p = get_async("/poll");
  ASSERT_TRUE(eventually([&] { return server->parked_waits() == 1; }));
  const auto started = std::chrono::steady_clock::now();
  server->stop(5s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
  EXPECT_EQ(status_of(p.get()), 204);
}

}  // namespace
}  // namespace podium::http
