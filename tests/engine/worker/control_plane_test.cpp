// The agent's connection to the control plane: calls from its threads share keep-alive
// connections, and a connection the server closed while idle costs a retry, not a failure.
#include "engine/worker/control_plane.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "backend/http/server.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;

struct ControlPlaneTest : ::testing::Test {
  std::atomic<int> calls{0};
  std::unique_ptr<http::HttpServer> server;

  void start(std::chrono::seconds idle_timeout) {
    http::ServerOptions o;
    o.port = 0;
    o.idle_timeout = idle_timeout;
    server = std::make_unique<http::HttpServer>(o, [this](http::Request& r) {
      ++calls;
      return http::Response::json(200, std::string(R"({"path":")") + r.path + "\"}");
    });
    server->start();
  }
  void TearDown() override {
    if (server) server->stop(1s);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server->port()); }
};

TEST_F(ControlPlaneTest, CallsShareKeepAliveConnections) {
  start(60s);
  auto api = make_http_control_plane(url(), "pdw_token");
  for (int i = 0; i < 20; ++i) {
    const auto r = api->call("POST", "heartbeat", "{}", 5s);
    ASSERT_TRUE(r.ok()) << r.describe();
  }
  EXPECT_EQ(calls.load(), 20);
  // One connection served them all and stays open for the next call.
  EXPECT_EQ(server->open_connections(), 1);

  // Threads calling at once get a connection each, and at most the pool's four stay open.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i)
        if (api->call("GET", "assignment?worker_id=w&wait=0", "", 5s).ok()) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_LE(server->open_connections(), 8);
}

TEST_F(ControlPlaneTest, AConnectionTheServerClosedWhileIdleIsReplacedWithoutAFailure) {
  start(1s);
  auto api = make_http_control_plane(url(), "pdw_token");
  ASSERT_TRUE(api->call("POST", "heartbeat", "{}", 5s).ok());
  // The server drops the idle keep-alive connection after its idle timeout.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server->open_connections() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_EQ(server->open_connections(), 0);
  const auto r = api->call("POST", "heartbeat", "{}", 5s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace podium::worker
