// HttpClient against a real socket: a small POSIX server on 127.0.0.1 in a thread, driven by a
// per-test handler that sees the raw request and writes a raw response.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/client/http_client.h"

namespace podium::client {
namespace {

using namespace std::chrono_literals;

void write_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads one request (headers and a Content-Length body), giving up after two seconds.
std::string read_request(int fd) {
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  size_t need = std::string::npos;
  while (std::chrono::steady_clock::now() < deadline) {
    if (need == std::string::npos) {
      const auto end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        const auto cl = data.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) length = std::stoul(data.substr(cl + 16));
        need = end + 4 + length;
      }
    }
    if (need != std::string::npos && data.size() >= need) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

class TestServer {
 public:
  using Handler =
      std::function<void(int fd, const std::string& request, const std::atomic<bool>& stopping)>;

  explicit TestServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 8) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
  }

  ~TestServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }

  std::string url(const std::string& prefix = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + prefix;
  }

  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  void loop() {
    while (!stopping_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req = read_request(c);
      {
        std::lock_guard lock(mu_);
        requests_.push_back(req);
      }
      handler_(c, req, stopping_);
      ::close(c);
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

TestServer::Handler reply(std::string response) {
  return
      [response](int fd, const std::string&, const std::atomic<bool>&) { write_all(fd, response); };
}

std::string http_response(int status, const std::string& reason, const std::string& body,
                          const std::string& content_type = "application/json") {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nX-Request-Id: abc\r\nConnection: close\r\n\r\n" + body;
}

void wait_until_stopping(const std::atomic<bool>& stopping) {
  while (!stopping) std::this_thread::sleep_for(5ms);
}

TEST(HttpClientExchange, GetSendsHeadersAndReturnsResponse) {
  TestServer server(reply(http_response(200, "OK", "{\"items\":[]}")));
  HttpClient client(server.url(), "tok-123");
  const auto r = client.get("/api/v1/runs?limit=5");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.response->status, 200);
  EXPECT_EQ(r.response->body, "{\"items\":[]}");
  EXPECT_EQ(r.response->header("content-type"), "application/json");
  EXPECT_EQ(r.response->header("x-request-id"), "abc");  // names are lower-cased

  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const std::string& req = reqs[0];
  EXPECT_EQ(req.rfind("GET /api/v1/runs?limit=5 HTTP/1.1\r\n", 0), 0u) << req;
  EXPECT_NE(req.find("Authorization: Bearer tok-123\r\n"), std::string::npos);
  EXPECT_NE(req.find("User-Agent: podium/" + std::string(client_version()) + "\r\n"),
            std::string::npos);
  EXPECT_NE(req.find("Accept: application/json\r\n"), std::string::npos);
  EXPECT_NE(req.find("Host: 127.0.0.1:"), std::string::npos);
  EXPECT_EQ(req.find("Content-Type"), std::string::npos);  // no body, no content type
}

TEST(HttpClientExchange, PostSendsJsonBodyUnderPrefixWithoutToken) {
  TestServer server(reply(http_response(201, "Created", "{\"id\":\"r1\"}")));
  HttpClient client(server.url("/podium/"));
  const auto r = client.post("/api/v1/runs", "{\"name\":\"x\"}");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.response->status, 201);
  const std::string req = server.requests().at(0);
  EXPECT_EQ(req.rfind("POST /podium/api/v1/runs HTTP/1.1\r\n", 0), 0u) << req;
  EXPECT_NE(req.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(req.find("Content-Length: 12\r\n"), std::string::npos);
  EXPECT_EQ(req.substr(req.size() - 12), "{\"name\":\"x\"}");
  EXPECT_EQ(req.find("Authorization"), std::string::npos);
}

TEST(HttpClientExchange, ErrorStatusIsAResponseNotAnError) {
  TestServer server(reply(
      http_response(404, "Not Found", "{\"title\":\"Not Found\"}", "application/problem+json")));
  HttpClient client(server.url());
  const auto r = client.del("/api/v1/runs/x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.response->status, 404);
  EXPECT_EQ(server.requests().at(0).rfind("DELETE /api/v1/runs/x ", 0), 0u);
}

TEST(HttpClientExchange, ExtraHeadersOverrideDefaults) {
  TestServer server(reply(http_response(200, "OK", "ok", "text/plain")));
  HttpClient client(server.url());
  RequestOptions o;
  o.headers = {{"Accept", "text/plain"}, {"X-Extra", "1"}};
  ASSERT_TRUE(client.get("/healthz", o).ok());
  const std::string req = server.requests().at(0);
  EXPECT_NE(req.find("Accept: text/plain\r\n"), std::string::npos);
  EXPECT_EQ(req.find("Accept: application/json"), std::string::npos);
  EXPECT_NE(req.find("X-Extra: 1\r\n"), std::string::npos);
}

TEST(HttpClientExchange, ChunkedResponse) {
  TestServer server(reply(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"));
  const auto r = HttpClient(server.url()).get("/x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.response->body, "abcde");
}

TEST(HttpClientExchange, ServerThatNeverAnswersTimesOutWithinTheDeadline) {
  TestServer server([](int, const std::string&, const std::atomic<bool>& stopping) {
    wait_until_stopping(stopping);
  });
  RequestOptions o;
  o.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const auto r = HttpClient(server.url()).get("/slow", o);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error->timed_out);
  EXPECT_NE(r.error->message.find("timed out after 300ms"), std::string::npos) << r.error->message;
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 2s);
}

TEST(HttpClientExchange, ServerThatStallsMidBodyTimesOut) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>& stopping) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
    wait_until_stopping(stopping);
  });
  RequestOptions o;
  o.timeout = 300ms;
  const auto r = HttpClient(server.url()).get("/x", o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error->timed_out);
}

TEST(HttpClientExchange, ConnectionRefused) {
  // A port that was just free: bind, read the port, close without listening.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  const auto r = HttpClient("http://127.0.0.1:" + std::to_string(port)).get("/x");
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(r.error->timed_out);
  EXPECT_NE(r.error->message.find("cannot connect to 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << r.error->message;
}

TEST(HttpClientExchange, ResponseBodyLimit) {
  TestServer server(reply(http_response(200, "OK", std::string(1000, 'x'))));
  RequestOptions o;
  o.max_response_bytes = 100;
  const auto r = HttpClient(server.url()).get("/big", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->message.find("exceeds the limit of 100 bytes"), std::string::npos)
      << r.error->message;
}

TEST(HttpClientExchange, GarbageResponseIsAnError) {
  TestServer server(reply("this is not http\r\n\r\n"));
  const auto r = HttpClient(server.url()).get("/x");
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(r.error->timed_out);
}

using Events = std::vector<std::pair<std::string, std::string>>;

TEST(HttpClientStream, ReadsEventsIncrementallyUntilTheServerCloses) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>&) {
    write_all(
        fd,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n");
    for (const char* piece : {"event: log\nda", "ta: {\"line\":\"a\"}\n", "\n: keep-alive\n\n",
                              "data: x\ndata: y\n\n"}) {
      write_all(fd, piece);
      std::this_thread::sleep_for(20ms);
    }
  });
  Events events;
  const auto err = HttpClient(server.url(), "t")
                       .stream_events("/api/v1/runs/r/logs/stream",
                                      [&](const std::string& e, const std::string& d) {
                                        events.emplace_back(e, d);
                                        return true;
                                      });
  EXPECT_FALSE(err) << err->message;
  EXPECT_EQ(events, (Events{{"log", "{\"line\":\"a\"}"}, {"message", "x\ny"}}));
  const std::string req = server.requests().at(0);
  EXPECT_EQ(req.rfind("GET /api/v1/runs/r/logs/stream HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(req.find("Accept: text/event-stream\r\n"), std::string::npos);
  EXPECT_NE(req.find("Authorization: Bearer t\r\n"), std::string::npos);
}

TEST(HttpClientStream, ChunkedStream) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>&) {
    write_all(
        fd,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
    write_all(fd, "8\r\ndata: 1\n\r\n");
    std::this_thread::sleep_for(20ms);
    write_all(fd, "1\r\n\n\r\n0\r\n\r\n");
  });
  Events events;
  const auto err =
      HttpClient(server.url()).stream_events("/s", [&](const std::string& e, const std::string& d) {
        events.emplace_back(e, d);
        return true;
      });
  EXPECT_FALSE(err) << err->message;
  EXPECT_EQ(events, (Events{{"message", "1"}}));
}

TEST(HttpClientStream, HandlerStopsTheStreamWhileTheServerKeepsItOpen) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>& stopping) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: first\n\n");
    wait_until_stopping(stopping);
  });
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto err = HttpClient(server.url())
                       .stream_events(
                           "/s",
                           [&](const std::string&, const std::string&) {
                             ++calls;
                             return false;
                           },
                           5s);
  EXPECT_FALSE(err);
  EXPECT_EQ(calls, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpClientStream, IdleTimeout) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>& stopping) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: hello\n\n");
    wait_until_stopping(stopping);
  });
  const auto start = std::chrono::steady_clock::now();
  const auto err =
      HttpClient(server.url())
          .stream_events(
              "/s", [](const std::string&, const std::string&) { return true; }, 300ms);
  ASSERT_TRUE(err);
  EXPECT_TRUE(err->timed_out);
  EXPECT_EQ(err->status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpClientStream, ActivityKeepsTheStreamAlivePastTheIdleTimeout) {
  TestServer server([](int fd, const std::string&, const std::atomic<bool>&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
    for (int i = 0; i < 6; ++i) {
      write_all(fd, ": tick\n\n");
      std::this_thread::sleep_for(100ms);
    }
    write_all(fd, "data: end\n\n");
  });
  Events events;
  const auto err = HttpClient(server.url())
                       .stream_events(
                           "/s",
                           [&](const std::string& e, const std::string& d) {
                             events.emplace_back(e, d);
                             return true;
                           },
                           300ms);
  EXPECT_FALSE(err) << err->message;
  EXPECT_EQ(events, (Events{{"message", "end"}}));
}

TEST(HttpClientStream, RefusedStreamCarriesStatusAndBody) {
  const std::string problem = "{\"title\":\"Not Found\",\"status\":404,\"detail\":\"no run r\"}";
  TestServer server(reply(http_response(404, "Not Found", problem, "application/problem+json")));
  bool called = false;
  const auto err =
      HttpClient(server.url()).stream_events("/s", [&](const std::string&, const std::string&) {
        called = true;
        return true;
      });
  ASSERT_TRUE(err);
  EXPECT_EQ(err->status, 404);
  EXPECT_EQ(err->body, problem);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace podium::client
