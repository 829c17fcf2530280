#pragma once
// What the listener, the sessions and HttpServer share: the io_context, the handler pools, the
// counters, the open sessions, the TLS context and the parked waits.
//
// Beast/Asio: included only by server.cpp, the one translation unit that compiles them (with
// listener.h, session.h and event_stream.h), because their headers dominate build time.

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/common/problem.h"
#include "backend/http/parked_waits.h"
#include "backend/http/server.h"

namespace podium::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

// An answer the HTTP layer gives itself (a malformed request, a limit, a handler that threw):
// problem+json, and the connection closes after it.
inline Response problem_response(int status, std::string detail) {
  Problem p;
  p.status = status;
  p.detail = std::move(detail);
  Response r = p.to_response();
  r.set_header("Connection", "close");
  return r;
}

// What stop() and the accept loop need of a session, whatever its stream.
struct SessionBase {
  virtual ~SessionBase() = default;
  virtual void shutdown_if_idle() = 0;
  virtual void force_close() = 0;
};

struct HttpServer::Impl {
  ServerOptions options;
  RequestHandler handler;
  RejectHandler on_reject;
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_backoff{ioc};
  std::unique_ptr<net::thread_pool> handlers;
  std::unique_ptr<net::thread_pool> priority;  // the liveness lane (heartbeats)
  std::vector<std::thread> io_threads;
  std::atomic<int> connections{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> queued{0};  // requests posted to `handlers`, not yet started
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle_cv;
  std::set<std::shared_ptr<SessionBase>> sessions;  // guarded by mu
  std::shared_ptr<net::ssl::context> tls;           // guarded by mu; null: plain HTTP
  int bound_port = 0;
  // The largest body any route accepts: Beast checks a Content-Length against the parser's
  // limit as the head completes, before the route is known.
  size_t largest_body = 0;
  ParkedWaits parked;

  RouteTraits traits(std::string_view method, std::string_view target) const {
    return options.routes ? options.routes->traits(method, target) : RouteTraits{};
  }
  void reject(int status, std::string reason, std::string remote) {
    if (on_reject) on_reject(RejectedRequest{status, std::move(reason), std::move(remote)});
  }
};

}  // namespace podium::http
