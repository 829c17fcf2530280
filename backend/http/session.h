#pragma once
// One connection (HTTP or HTTPS): reads a request under deadlines and the route's body limit,
// hands it to a handler thread (the route's lane), writes the answer, and keeps the connection
// alive or closes it. A Deferred answer or an idle event stream is parked here, on the
// connection's strand, without a thread (the registry: parked_waits.h).
//
// Beast/Asio: included only through server.cpp (see server_state.h).

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "backend/http/event_stream.h"
#include "backend/http/server_state.h"

namespace podium::http {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One connection. Stream is beast::tcp_stream (HTTP) or beast::ssl_stream<beast::tcp_stream>
// (HTTPS); tcp() is the TCP layer under either, which carries the deadlines.
template <class Stream>
struct Session : SessionBase, std::enable_shared_from_this<Session<Stream>> {
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  HttpServer::Impl& server;
  Stream stream;
  beast::flat_buffer buffer;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser;
  std::string remote;
  bool busy = false;  // a request is being handled or written; guarded by the strand
  std::shared_ptr<void> pending_write;  // keeps the message alive during async_write

  Session(HttpServer::Impl& s, tcp::socket socket) requires(!kTls)
      : server(s), stream(std::move(socket)) {
    remember_remote();
  }
  Session(HttpServer::Impl& s, tcp::socket socket, net::ssl::context& tls) requires(kTls)
      : server(s), stream(std::move(socket), tls), tls_context(&tls) {
    remember_remote();
  }
  net::ssl::context* tls_context = nullptr;
  std::shared_ptr<net::ssl::context> tls_keepalive;  // the context outlives the connection

  beast::tcp_stream& tcp() {
    if constexpr (kTls)
      return stream.next_layer();
    else
      return stream;
  }

  void remember_remote() {
    beast::error_code ec;
    auto ep = tcp().socket().remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string();
  }

  void start() {
    net::dispatch(stream.get_executor(), [self = shared_from_this()] {
      if constexpr (kTls) {
        // The handshake is part of reading the first request: the read deadline bounds it.
        self->tcp().expires_after(self->server.options.read_timeout);
        self->stream.async_handshake(net::ssl::stream_base::server, [self](beast::error_code ec) {
          if (ec) {
            self->server.reject(0, "TLS handshake failed: " + ec.message(), self->remote);
            return self->close();
          }
          self->wait_for_request();
        });
      } else {
        self->wait_for_request();
      }
    });
  }

  // Keep-alive idle wait: the idle deadline applies until the first byte of the next request;
  // from then on the (shorter) read deadline covers the whole request.
  void wait_for_request() {
    if (server.stopping) return close();
    if (buffer.size() > 0) return read_request();
    if constexpr (kTls) {
      // The TLS layer may already hold the next request, read from the socket with the last
      // handshake message (TLS 1.3 clients send both at once) or with the previous request's
      // records, and then the socket would not become readable for it again. So over TLS the
      // wait is a read of the first bytes through the TLS stream, under the idle deadline.
      tcp().expires_after(server.options.idle_timeout);
      stream.async_read_some(buffer.prepare(kFirstReadBytes),
                             [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                               if (ec) return self->close();
                               self->buffer.commit(n);
                               self->read_request();
                             });
      return;
    }
    tcp().expires_after(server.options.idle_timeout);
    tcp().socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this()](beast::error_code ec) {
                                if (ec) return self->close();
                                self->read_request();
                              });
    // async_wait does not honour tcp_stream's timer; arm a separate one.
    idle_timer_arm();
  }

  static constexpr std::size_t kFirstReadBytes = 4096;
  std::optional<net::steady_timer> idle_timer;
  void idle_timer_arm() {
    idle_timer.emplace(stream.get_executor());
    idle_timer->expires_after(server.options.idle_timeout);
    idle_timer->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && !self->busy) {
        beast::error_code ignored;
        self->tcp().socket().cancel(ignored);
      }
    });
  }

  void read_request() {
    if (idle_timer) idle_timer->cancel();
    parser.emplace();
    // Beast checks Content-Length against the limit as the head completes, before on_header
    // can tell which limit applies: start with the largest one and narrow it there.
    parser->body_limit(server.largest_body);
    parser->header_limit(static_cast<std::uint32_t>(server.options.max_header_bytes));
    tcp().expires_after(server.options.read_timeout);
    bhttp::async_read_header(
        stream, buffer, *parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  // The head decides the route, and the route the body's limit and the lane: uploads that
  // declare a large body (code bundles) may be larger and take longer; everything else keeps
  // max_body_bytes and read_timeout.
  RouteTraits route;
  RouteTraits head_traits() const {
    const auto& head = parser->get();
    return server.traits(head.method_string(), head.target());
  }
  std::uint64_t body_limit(const RouteTraits& traits) const {
    return traits.large_body ? traits.large_body->max_bytes : server.options.max_body_bytes;
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read(ec);
    route = head_traits();
    const std::uint64_t limit = body_limit(route);
    // A chunked body counts down from the limit set here; a Content-Length is checked now.
    parser->body_limit(limit);
    if (const auto length = parser->content_length(); length && *length > limit)
      return on_read(bhttp::error::body_limit);
    if (route.large_body) tcp().expires_after(route.large_body->deadline);
    if (parser->is_done()) return on_read(ec);
    bhttp::async_read(
        stream, buffer, *parser,
        [self = shared_from_this()](beast::error_code ec2, std::size_t) { self->on_read(ec2); });
  }

  void on_read(beast::error_code ec) {
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::error::operation_aborted)
      return close();
    if (ec == beast::error::timeout) {
      server.reject(0, "read deadline exceeded", remote);
      return close();
    }
    if (ec == bhttp::error::body_limit) {
      server.reject(413, "body over limit", remote);
      return write_and_linger(problem_response(413, "request body exceeds the limit of " +
                                                        std::to_string(body_limit(head_traits())) +
                                                        " bytes"));
    }
    if (ec == bhttp::error::header_limit) {
      server.reject(431, "header over limit", remote);
      return write_and_linger(
          problem_response(431, "request head exceeds the limit of " +
                                    std::to_string(server.options.max_header_bytes) + " bytes"));
    }
    if (ec) {
      server.reject(400, std::string("malformed request: ") + ec.message(), remote);
      return write_and_linger(problem_response(400, "malformed HTTP request: " + ec.message()));
    }
    dispatch(parser->release());
  }

  void dispatch(BeastRequest breq) {
    busy = true;
    tcp().expires_never();
    auto req = std::make_shared<Request>();
    req->method = std::string(breq.method_string());
    req->target = std::string(breq.target());
    req->remote_address = remote;
    for (const auto& f : breq)
      req->headers.emplace_back(ascii_lower(f.name_string()), std::string(f.value()));
    req->body = std::move(breq.body());
    const bool keep_alive = breq.keep_alive() && !server.stopping;
    const unsigned version = breq.version();
    if (!parse_target(req->target, req->path, req->query)) {
      busy = false;
      return write_response(problem_response(400, "malformed request target"), false, version,
                            false);
    }
    const bool head = req->method == "HEAD";

    const bool priority = route.lane == Lane::liveness;
    if (!priority && server.queued.load() >= server.options.max_queued_requests) {
      // Saturated: say so at once (the client retries) rather than queue without bound.
      busy = false;
      server.reject(503, "handler queue full", remote);
      Problem busy_problem;
      busy_problem.status = 503;
      busy_problem.detail = "the server is busy; retry shortly";
      Response res = busy_problem.to_response();
      res.set_header("Retry-After", "1");
      return write_response(std::move(res), keep_alive, version, head);
    }
    ++server.in_flight;
    if (!priority) ++server.queued;
    net::post(priority ? *server.priority : *server.handlers,
              [self = shared_from_this(), req, keep_alive, version, head, priority] {
                if (!priority) --self->server.queued;
                Response res;
                try {
                  res = self->server.handler(*req);
                } catch (const std::exception& e) {
                  res = problem_response(500, "internal error");
                }
                net::post(self->stream.get_executor(),
                          [self, res = std::move(res), keep_alive, version, head]() mutable {
                            self->deliver(std::move(res), keep_alive, version, head);
                          });
              });
  }

  void deliver(Response res, bool keep_alive, unsigned version, bool head) {
    if (res.deferred) return continue_deferred(std::move(res.deferred), keep_alive, version, head);
    if (res.stream) {
      auto body = res.stream;
      return std::make_shared<EventStream<Session>>(shared_from_this(), std::move(body))
          ->start(std::move(res), version);
    }
    write_response(std::move(res), keep_alive, version, head);
  }

  // A wait on the strand: a timer, registered under its keys; `then(timed_out)` runs on the
  // strand when a wake-up or the timeout ends it (or at once when `fired` says one came already).
  void park(Wait w, std::function<void(bool timed_out)> then) {
    auto timer = std::make_shared<net::steady_timer>(stream.get_executor());
    timer->expires_after(std::max(w.timeout, std::chrono::milliseconds(0)));
    auto woken = std::make_shared<bool>(false);  // strand-guarded
    auto token = std::make_shared<ParkedWait>();
    std::weak_ptr<Session> weak = shared_from_this();
    token->wake = [weak, timer, woken] {
      if (auto self = weak.lock())
        net::post(self->stream.get_executor(), [timer, woken] {
          *woken = true;
          timer->cancel();
        });
    };
    server.parked.add(w.keys, token);
    parked_wait = token;
    timer->async_wait([self = shared_from_this(), timer, woken, token, keys = w.keys,
                       then = std::move(then)](beast::error_code) {
      self->server.parked.remove(keys, token.get());
      if (self->parked_wait == token) self->parked_wait.reset();
      if (self->closed) return;
      then(!*woken || self->server.stopping);
    });
    if (server.stopping || (w.fired && w.fired())) {
      *woken = true;
      timer->cancel();
    }
  }
  std::shared_ptr<ParkedWait> parked_wait;  // the current one, for stop()

  void continue_deferred(std::shared_ptr<Deferred> d, bool keep_alive, unsigned version,
                         bool head) {
    Wait w;
    try {
      w = d->wait();
    } catch (const std::exception&) {
      return write_response(problem_response(500, "internal error"), keep_alive, version, head);
    }
    park(std::move(w), [self = shared_from_this(), d, keep_alive, version, head](bool timed_out) {
      // Resumes hold a connection already: they are bounded by the connection limit, not
      // refused for a full queue.
      net::post(*self->server.handlers, [self, d, keep_alive, version, head, timed_out] {
        std::optional<Response> res;
        try {
          res = d->resume(timed_out);
          if (!res && self->server.stopping)
            res = problem_response(503, "the server is shutting down");
        } catch (const std::exception&) {
          res = problem_response(500, "internal error");
        }
        net::post(self->stream.get_executor(),
                  [self, d, res = std::move(res), keep_alive, version, head]() mutable {
                    if (self->closed) return;
                    if (!res) return self->continue_deferred(d, keep_alive, version, head);
                    res->deferred.reset();  // one level only
                    self->deliver(std::move(*res), keep_alive, version, head);
                  });
      });
    });
  }

  BeastResponse to_beast(Response& res, bool keep_alive, unsigned version, bool head) {
    BeastResponse out{static_cast<bhttp::status>(res.status), version};
    for (auto& [k, v] : res.headers) out.set(k, v);
    out.set(bhttp::field::server, "podium");
    out.keep_alive(keep_alive);
    if (head) {
      out.content_length(res.body.size());
    } else {
      out.body() = std::move(res.body);
      out.prepare_payload();
    }
    return out;
  }

  void write_response(Response res, bool keep_alive, unsigned version, bool head) {
    if (res.header("Connection") == std::string_view("close")) keep_alive = false;
    auto msg = std::make_shared<BeastResponse>(to_beast(res, keep_alive, version, head));
    pending_write = msg;
    tcp().expires_after(server.options.write_timeout);
    bhttp::async_write(stream, *msg,
                       [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                         self->pending_write.reset();
                         self->finish_request();
                         if (ec || !keep_alive) return self->close();
                         self->wait_for_request();
                       });
  }

  void finish_request() {
    if (busy) {
      busy = false;
      if (--server.in_flight == 0) server.idle_cv.notify_all();
    }
  }

  // Answer an error the parser raised, then read and discard what the client still sends for a
  // moment before closing, so that it can read the answer instead of a connection reset.
  void write_and_linger(Response res) {
    auto msg = std::make_shared<BeastResponse>(to_beast(res, false, 11, false));
    pending_write = msg;
    tcp().expires_after(server.options.write_timeout);
    bhttp::async_write(stream, *msg,
                       [self = shared_from_this()](beast::error_code ec, std::size_t) {
                         self->pending_write.reset();
                         if (ec) return self->close();
                         beast::error_code ignored;
                         self->tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
                         self->tcp().expires_after(std::chrono::seconds(2));
                         self->drain(64 * 1024 * 1024);
                       });
  }

  std::array<char, 16384> drain_buf{};
  void drain(size_t budget) {
    stream.async_read_some(net::buffer(drain_buf), [self = shared_from_this(), budget](
                                                       beast::error_code ec, std::size_t n) {
      if (ec || n >= budget) return self->close();
      self->drain(budget - n);
    });
  }

  bool closed = false;
  void close() {
    if (closed) return;
    closed = true;
    if (idle_timer) idle_timer->cancel();
    finish_request();
    beast::error_code ec;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp().close();
    --server.connections;
    std::lock_guard lock(server.mu);
    server.sessions.erase(shared_from_this());
  }

  // Called from stop(): idle connections are closed at once, busy ones after their response.
  void shutdown_if_idle() override {
    net::post(stream.get_executor(), [self = shared_from_this()] {
      if (!self->busy) self->close();
    });
  }
  void force_close() override {
    net::post(stream.get_executor(), [self = shared_from_this()] { self->close(); });
  }
};

}  // namespace podium::http
