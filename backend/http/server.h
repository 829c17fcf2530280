#pragma once
// The HTTP/1.1 server. Beast and Asio stay inside server.cpp; callers see plain types.
//
// One acceptor, one session per connection on its own strand. Before every read a fresh parser
// gets the body and header limits and the stream a deadline, so a slow or oversized client costs
// a bounded amount of time and memory. Handlers run on a separate thread pool because they block
// on PostgreSQL; the socket side never blocks. The pool's queue is bounded (503 beyond it) and
// heartbeats have their own lane. A long-poll or an idle stream is parked on a timer (Deferred,
// BodyStream::idle) and woken by key, so waiting costs no handler thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/common/http_message.h"
#include "backend/common/router.h"

namespace podium::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port (see HttpServer::port())
  size_t max_body_bytes = 8 * 1024 * 1024;
  size_t max_header_bytes = 16 * 1024;
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds write_timeout{30};
  int max_connections = 1024;
  int handler_threads = 32;
  // Requests waiting for a handler thread beyond this get 503 with Retry-After at once instead
  // of queueing without limit. Parked waits (long-polls, idle streams) hold no thread and do
  // not count.
  int max_queued_requests = 256;
  // The route table, read once a request's head has arrived: a route's lane (liveness runs on
  // its own pool of priority_threads, never refused for a full queue) and its body limit
  // (RouteTraits). Null: every request takes the standard lane and max_body_bytes.
  const Router* routes = nullptr;
  int priority_threads = 2;
  int io_threads = 2;
  // PEM certificate chain and key: HTTPS on this listener (TLS 1.2 and later). Both or neither.
  std::string tls_cert_file;
  std::string tls_key_file;
};

// Called for requests the HTTP layer answers itself (413, 431, 400, 503 over the connection
// limit, read deadline): for the access log and metrics.
struct RejectedRequest {
  int status;  // 0 when the connection was closed without a response (deadline)
  std::string reason;
  std::string remote_address;
};

using RequestHandler = std::function<Response(Request&)>;
using RejectHandler = std::function<void(const RejectedRequest&)>;

class HttpServer {
 public:
  HttpServer(ServerOptions options, RequestHandler handler, RejectHandler on_reject = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving on background threads. Throws std::runtime_error when it cannot bind.
  void start();
  int port() const;
  bool tls() const;
  // Reads the certificate and key files again (SIGHUP); new connections use them. "" on
  // success, else why not (the previous certificate stays in use).
  std::string reload_tls();
  // Ends the parked waits registered under "channel:key" (Wait::keys); key "*" ends every wait
  // of the channel, channel "" every wait. Thread-safe; a NotificationHub observer calls it.
  void wake(const std::string& channel, const std::string& key);
  int parked_waits() const;
  int queued_requests() const;  // waiting for a handler thread now
  // Stops accepting, lets in-flight requests finish for at most `grace`, then closes everything.
  void stop(std::chrono::milliseconds grace);
  int open_connections() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace podium::http
