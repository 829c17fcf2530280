// GCC 12 at -O2 reports -Wnull-dereference inside Asio's executor comparison and scheduler (and
// the std::shared_ptr they use) once inlined here: false positives in library code. Confined to
// this translation unit, and placed before every include so the headers are covered too.
#pragma GCC diagnostic ignored "-Wnull-dereference"

// The one translation unit that compiles Beast and Asio: HttpServer's life cycle (start, stop,
// TLS reload, wake-ups) over the parts by role, each in its own header: the shared state
// (server_state.h), the listener (listener.h), a connection (session.h), streamed bodies
// (event_stream.h). The parked waits' registry (parked_waits.cpp) needs no Beast.
#include "backend/http/server.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend/http/listener.h"
#include "backend/http/server_state.h"

namespace podium::http {

HttpServer::HttpServer(ServerOptions options, RequestHandler handler, RejectHandler on_reject)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  impl_->on_reject = std::move(on_reject);
}

HttpServer::~HttpServer() {
  stop(std::chrono::milliseconds(0));
}

void HttpServer::start() {
  auto& s = *impl_;
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    if (s.options.tls_cert_file.empty() || s.options.tls_key_file.empty())
      throw std::runtime_error("tls: both a certificate and a key are needed");
    s.tls = load_tls(s.options.tls_cert_file, s.options.tls_key_file);
  }
  beast::error_code ec;
  auto address =
      net::ip::make_address(s.options.host == "localhost" ? "127.0.0.1" : s.options.host, ec);
  if (ec) throw std::runtime_error("listen: invalid address '" + s.options.host + "'");
  tcp::endpoint ep{address, static_cast<unsigned short>(s.options.port)};
  s.acceptor.open(ep.protocol(), ec);
  if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(ep, ec);
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("cannot listen on " + s.options.host + ":" +
                             std::to_string(s.options.port) + ": " + ec.message());
  s.bound_port = s.acceptor.local_endpoint().port();
  s.largest_body = s.options.max_body_bytes;
  if (s.options.routes)
    for (const auto& route : s.options.routes->routes())
      if (route.traits.large_body)
        s.largest_body = std::max(s.largest_body, route.traits.large_body->max_bytes);
  s.handlers = std::make_unique<net::thread_pool>(static_cast<size_t>(s.options.handler_threads));
  s.priority = std::make_unique<net::thread_pool>(
      static_cast<size_t>(std::max(1, s.options.priority_threads)));
  s.work.emplace(s.ioc.get_executor());
  accept_next(s);
  for (int i = 0; i < std::max(1, s.options.io_threads); ++i)
    s.io_threads.emplace_back([&s] { s.ioc.run(); });
}

bool HttpServer::tls() const {
  std::lock_guard lock(impl_->mu);
  return impl_->tls != nullptr;
}

std::string HttpServer::reload_tls() {
  auto& s = *impl_;
  if (s.options.tls_cert_file.empty()) return "";
  try {
    auto fresh = load_tls(s.options.tls_cert_file, s.options.tls_key_file);
    std::lock_guard lock(s.mu);
    s.tls = std::move(fresh);
    return "";
  } catch (const std::exception& e) {
    return e.what();  // the old certificate stays in use
  }
}

int HttpServer::port() const {
  return impl_->bound_port;
}
int HttpServer::open_connections() const {
  return impl_->connections.load();
}

void HttpServer::wake(const std::string& channel, const std::string& key) {
  impl_->parked.wake(channel, key);
}

int HttpServer::queued_requests() const {
  return impl_->queued.load();
}

int HttpServer::parked_waits() const {
  return impl_->parked.count();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  auto& s = *impl_;
  if (s.io_threads.empty()) return;
  if (!s.stopping.exchange(true)) {
    net::post(s.ioc, [&s] {
      beast::error_code ec;
      s.acceptor.close(ec);
      s.accept_backoff.cancel();
    });
  }
  auto snapshot = [&s] {
    std::lock_guard lock(s.mu);
    return std::vector<std::shared_ptr<SessionBase>>(s.sessions.begin(), s.sessions.end());
  };
  for (auto& session : snapshot()) session->shutdown_if_idle();
  s.parked.wake("", "");  // parked waits answer now (their resume sees the server stopping)
  {
    std::unique_lock lock(s.mu);
    s.idle_cv.wait_for(lock, grace, [&s] { return s.in_flight.load() == 0; });
  }
  for (auto& session : snapshot()) session->force_close();
  // Handlers still running (a long-poll) finish on their own; their writes find closed sockets.
  s.work.reset();
  if (s.handlers) s.handlers->stop();
  if (s.priority) s.priority->stop();
  s.ioc.stop();
  for (auto& t : s.io_threads) t.join();
  s.io_threads.clear();
  if (s.handlers) s.handlers->join();
  if (s.priority) s.priority->join();
  std::lock_guard lock(s.mu);
  s.sessions.clear();
}

}  // namespace podium::http
