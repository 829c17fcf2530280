// GCC 12 at -O2 reports -Wnull-dereference inside Asio's executor comparison and scheduler (and
// the std::shared_ptr they use) once inlined here: false positives in library code. Confined to
// this translation unit, and placed before every include so the headers are covered too.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include "backend/http/server.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/common/problem.h"

namespace podium::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Response problem_response(int status, std::string detail) {
  Problem p;
  p.status = status;
  p.detail = std::move(detail);
  Response r = p.to_response();
  r.set_header("Connection", "close");
  return r;
}

}  // namespace

// What stop() and the accept loop need of a session, whatever its stream.
struct SessionBase {
  virtual ~SessionBase() = default;
  virtual void shutdown_if_idle() = 0;
  virtual void force_close() = 0;
};

// The TLS context of new connections; replaced whole on reload (SIGHUP), so connections keep
// the context they started with.
std::shared_ptr<net::ssl::context> load_tls(const std::string& cert_file,
                                            const std::string& key_file) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                   net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
  beast::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec)
    throw std::runtime_error("tls: cannot load the certificate chain " + cert_file + ": " +
                             ec.message());
  ctx->use_private_key_file(key_file, net::ssl::context::pem, ec);
  if (ec)
    throw std::runtime_error("tls: cannot load the private key " + key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    throw std::runtime_error("tls: the private key " + key_file +
                             " does not match the certificate " + cert_file);
  return ctx;
}

struct HttpServer::Impl {
  ServerOptions options;
  RequestHandler handler;
  RejectHandler on_reject;
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_backoff{ioc};
  std::unique_ptr<net::thread_pool> handlers;
  std::vector<std::thread> io_threads;
  std::atomic<int> connections{0};
  std::atomic<int> in_flight{0};
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle_cv;
  std::set<std::shared_ptr<SessionBase>> sessions;  // guarded by mu
  int bound_port = 0;
  std::shared_ptr<net::ssl::context> tls;      // guarded by mu; null: plain HTTP
  std::unique_ptr<net::thread_pool> priority;  // priority_paths (heartbeats)
  std::atomic<int> queued{0};                  // requests posted to `handlers`, not yet started

  // Parked waits by key. The registry holds weak references: a wait that ended is skipped and
  // erased when its key is next woken or when it unregisters itself.
  struct Parked {
    std::function<void()> wake;  // posts the end of the wait to the session's strand
  };
  mutable std::mutex park_mu;
  std::multimap<std::string, std::weak_ptr<Parked>> parked;  // guarded by park_mu

  void register_parked(const std::vector<std::string>& keys, const std::shared_ptr<Parked>& p) {
    std::lock_guard lock(park_mu);
    for (const auto& k : keys) parked.emplace(k, p);
  }
  void unregister_parked(const std::vector<std::string>& keys, const Parked* p) {
    std::lock_guard lock(park_mu);
    for (const auto& k : keys) {
      auto [b, e] = parked.equal_range(k);
      for (auto it = b; it != e;) {
        auto sp = it->second.lock();
        it = !sp || sp.get() == p ? parked.erase(it) : std::next(it);
      }
    }
  }
  void wake_matching(const std::string& channel, const std::string& key) {
    std::vector<std::shared_ptr<Parked>> hit;
    {
      std::lock_guard lock(park_mu);
      auto take = [&](std::multimap<std::string, std::weak_ptr<Parked>>::iterator it) {
        if (auto sp = it->second.lock()) hit.push_back(std::move(sp));
        return parked.erase(it);
      };
      if (channel.empty()) {
        for (auto it = parked.begin(); it != parked.end();) it = take(it);
      } else if (key == "*") {
        const std::string prefix = channel + ":";
        for (auto it = parked.lower_bound(prefix);
             it != parked.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
          it = take(it);
      } else {
        auto [b, e] = parked.equal_range(channel + ":" + key);
        for (auto it = b; it != e;) it = take(it);
      }
    }
    for (auto& p : hit) p->wake();
  }

  bool priority_path(std::string_view target) const {
    const auto path = target.substr(0, target.find('?'));
    for (const auto& p : options.priority_paths)
      if (path == p) return true;
    return false;
  }

  void do_accept();
  void reject(int status, std::string reason, std::string remote) {
    if (on_reject) on_reject(RejectedRequest{status, std::move(reason), std::move(remote)});
  }
};

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
    tcp().expires_after(server.options.idle_timeout);
    tcp().socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this()](beast::error_code ec) {
                                if (ec) return self->close();
                                self->read_request();
                              });
    // async_wait does not honour tcp_stream's timer; arm a separate one.
    idle_timer_arm();
  }

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
    // can tell which limit applies: start with the larger one and narrow it there.
    parser->body_limit(
        server.options.large_body_prefix.empty()
            ? server.options.max_body_bytes
            : std::max(server.options.max_body_bytes, server.options.max_large_body_bytes));
    parser->header_limit(static_cast<std::uint32_t>(server.options.max_header_bytes));
    tcp().expires_after(server.options.read_timeout);
    bhttp::async_read_header(
        stream, buffer, *parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  // The head decides the body's limit: uploads under large_body_prefix (code bundles) may be
  // larger and take longer; everything else keeps max_body_bytes and read_timeout.
  bool large_body_route() const {
    const auto& prefix = server.options.large_body_prefix;
    return !prefix.empty() && parser->get().method() == bhttp::verb::put &&
           parser->get().target().substr(0, prefix.size()) == prefix;
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read(ec);
    const bool large = large_body_route();
    const std::uint64_t limit =
        large ? server.options.max_large_body_bytes : server.options.max_body_bytes;
    // A chunked body counts down from the limit set here; a Content-Length is checked now.
    parser->body_limit(limit);
    if (const auto length = parser->content_length(); length && *length > limit)
      return on_read(bhttp::error::body_limit);
    if (large) tcp().expires_after(server.options.large_body_timeout);
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
      const bool large = large_body_route();
      return write_and_linger(
          problem_response(413, "request body exceeds the limit of " +
                                    std::to_string(large ? server.options.max_large_body_bytes
                                                         : server.options.max_body_bytes) +
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
      req->headers.emplace_back(lower(f.name_string()), std::string(f.value()));
    req->body = std::move(breq.body());
    const bool keep_alive = breq.keep_alive() && !server.stopping;
    const unsigned version = breq.version();
    std::string_view target = req->target;
    const size_t q = target.find('?');
    auto path = decode_percent(target.substr(0, q), false);
    std::optional<std::vector<std::pair<std::string, std::string>>> query;
    if (q != std::string_view::npos)
      query = parse_query(target.substr(q + 1));
    else
      query.emplace();
    if (!path || !query || target.empty() || target.front() != '/') {
      busy = false;
      return write_response(problem_response(400, "malformed request target"), false, version,
                            false);
    }
    req->path = std::move(*path);
    req->query = std::move(*query);
    const bool head = req->method == "HEAD";

    const bool priority = server.priority_path(req->target);
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
    if (res.stream) return start_stream(std::move(res), version);
    write_response(std::move(res), keep_alive, version, head);
  }

  // A wait on the strand: a timer, registered under its keys; `then(timed_out)` runs on the
  // strand when a wake-up or the timeout ends it (or at once when `fired` says one came already).
  void park(Wait w, std::function<void(bool timed_out)> then) {
    auto timer = std::make_shared<net::steady_timer>(stream.get_executor());
    timer->expires_after(std::max(w.timeout, std::chrono::milliseconds(0)));
    auto woken = std::make_shared<bool>(false);  // strand-guarded
    auto token = std::make_shared<HttpServer::Impl::Parked>();
    std::weak_ptr<Session> weak = shared_from_this();
    token->wake = [weak, timer, woken] {
      if (auto self = weak.lock())
        net::post(self->stream.get_executor(), [timer, woken] {
          *woken = true;
          timer->cancel();
        });
    };
    server.register_parked(w.keys, token);
    parked_wait = token;
    timer->async_wait([self = shared_from_this(), timer, woken, token, keys = w.keys,
                       then = std::move(then)](beast::error_code) {
      self->server.unregister_parked(keys, token.get());
      if (self->parked_wait == token) self->parked_wait.reset();
      if (self->closed) return;
      then(!*woken || self->server.stopping);
    });
    if (server.stopping || (w.fired && w.fired())) {
      *woken = true;
      timer->cancel();
    }
  }
  std::shared_ptr<HttpServer::Impl::Parked> parked_wait;  // the current one, for stop()

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

  // Server-Sent Events and other streamed bodies: chunked transfer, chunks pulled on the handler
  // pool (next() may block briefly), written on the strand one at a time.
  void start_stream(Response res, unsigned version) {
    auto msg = std::make_shared<bhttp::response<bhttp::empty_body>>(
        static_cast<bhttp::status>(res.status), version);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    msg->set(bhttp::field::server, "podium");
    msg->chunked(true);
    msg->keep_alive(false);
    auto sr = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*msg);
    pending_write = msg;
    // A stream's send buffer is fixed small: with the kernel's autotuning (up to 4 MB) a
    // follower that never reads soaks up megabytes of log before a write blocks and the write
    // deadline starts, so a live stream kept it open for minutes. 128 KB (the kernel doubles it)
    // still carries a few MB/s at a WAN's round trip.
    beast::error_code buffer_ec;
    tcp().socket().set_option(net::socket_base::send_buffer_size(128 * 1024), buffer_ec);
    tcp().expires_after(server.options.write_timeout);
    auto body = res.stream;
    bhttp::async_write_header(
        stream, *sr, [self = shared_from_this(), sr, msg, body](beast::error_code ec, std::size_t) {
          if (ec) {
            self->finish_request();
            return self->close();
          }
          self->pull_chunk(body);
        });
  }

  void pull_chunk(std::shared_ptr<BodyStream> body) {
    if (server.stopping) return end_stream();
    net::post(*server.handlers, [self = shared_from_this(), body] {
      std::string chunk;
      bool more = false;
      std::optional<Wait> idle;
      try {
        more = body->next(chunk);
        if (chunk.empty() && more) idle = body->idle();
      } catch (const std::exception&) {
        more = false;
      }
      net::post(self->stream.get_executor(), [self, body, more, idle = std::move(idle),
                                              chunk = std::move(chunk)]() mutable {
        if (self->closed) return;
        if (chunk.empty()) {
          if (!more) return self->end_stream();
          if (idle)  // nothing to send: wait without a thread, then ask again
            return self->park(std::move(*idle), [self, body](bool) { self->pull_chunk(body); });
          return self->pull_chunk(body);
        }
        auto data = std::make_shared<std::string>(std::move(chunk));
        self->tcp().expires_after(self->server.options.write_timeout);
        net::async_write(self->stream, bhttp::make_chunk(net::buffer(*data)),
                         [self, body, data, more](beast::error_code ec, std::size_t) {
                           if (ec) {
                             self->finish_request();
                             return self->close();
                           }
                           if (!more) return self->end_stream();
                           self->pull_chunk(body);
                         });
      });
    });
  }

  void end_stream() {
    tcp().expires_after(server.options.write_timeout);
    net::async_write(stream, bhttp::make_chunk_last(),
                     [self = shared_from_this()](beast::error_code, std::size_t) {
                       self->finish_request();
                       self->close();
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

template <class S>
void admit(HttpServer::Impl& server, std::shared_ptr<S> session) {
  if (server.connections.load() >= server.options.max_connections) {
    // Over the limit: answer 503 and close instead of silently queueing work.
    ++server.connections;
    {
      std::lock_guard lock(server.mu);
      server.sessions.insert(session);
    }
    server.reject(503, "connection limit reached", session->remote);
    net::dispatch(session->stream.get_executor(), [session] {
      session->busy = false;
      if constexpr (S::kTls) {
        // Over TLS the answer needs a handshake first; closing says as much at less cost.
        session->close();
      } else {
        session->write_and_linger(problem_response(503, "too many open connections"));
      }
    });
    return;
  }
  ++server.connections;
  {
    std::lock_guard lock(server.mu);
    server.sessions.insert(session);
  }
  session->start();
}

void HttpServer::Impl::do_accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      // Out of files (EMFILE/ENFILE) or buffers: accepting again at once fails again at once,
      // and the loop would take an I/O thread from every open connection. The pending
      // connections wait in the listen backlog meanwhile.
      accept_backoff.expires_after(std::chrono::milliseconds(50));
      accept_backoff.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping && acceptor.is_open()) do_accept();
      });
      return;
    }
    if (stopping) return;
    std::shared_ptr<net::ssl::context> context;
    {
      std::lock_guard lock(mu);
      context = tls;
    }
    if (context) {
      auto session = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
          *this, std::move(socket), *context);
      session->tls_keepalive = context;
      admit(*this, session);
    } else {
      admit(*this, std::make_shared<Session<beast::tcp_stream>>(*this, std::move(socket)));
    }
    do_accept();
  });
}

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
  s.handlers = std::make_unique<net::thread_pool>(static_cast<size_t>(s.options.handler_threads));
  s.priority = std::make_unique<net::thread_pool>(
      static_cast<size_t>(std::max(1, s.options.priority_threads)));
  s.work.emplace(s.ioc.get_executor());
  s.do_accept();
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
  impl_->wake_matching(channel, key);
}

int HttpServer::queued_requests() const {
  return impl_->queued.load();
}

int HttpServer::parked_waits() const {
  std::lock_guard lock(impl_->park_mu);
  int n = 0;
  for (const auto& [k, w] : impl_->parked) n += w.expired() ? 0 : 1;
  return n;
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
  s.wake_matching("", "");  // parked waits answer now (their resume sees the server stopping)
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
