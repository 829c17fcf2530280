// The only translation unit of the client that includes Beast/Asio (they are heavy to compile).
//
// Every exchange runs on a private io_context with C++20 coroutines. One watchdog timer bounds
// it: for request() it is armed once with the whole deadline (resolve + connect + write + read);
// for stream_events() it is re-armed after every chunk, so it measures idle time. When it fires
// it cancels the resolver and closes the socket, which makes the pending operation complete with
// an error; the coroutine then reports "timed out" instead of that error.

#include "engine/client/http_client.h"

// GCC 12 at -O2 reports -Wnull-dereference inside Asio's scheduler and executor comparison
// (thread_call_stack::contains and basic_executor_type::operator==) once they are inlined into
// the coroutines below: false positives in Boost code, not ours. The pragma must precede the
// Boost includes and is confined to this translation unit.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>

namespace podium::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// Responses carry JSON; headers are small. Beast's default header limit (8 KiB) is too tight for
// a proxy that adds a few cookies, so allow more while still bounding it.
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
// A refused stream's problem+json body is read up to this size for the error message.
constexpr size_t kErrorBodyLimit = 64 * 1024;

std::string describe_duration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// State of one exchange; lives on the stack of the calling thread while the io_context runs.
// Over https, `tls` wraps its own TCP socket and `socket` stays unused.
struct Exchange {
  asio::io_context ioc{1};
  tcp::resolver resolver{ioc};
  tcp::socket socket{ioc};
  std::optional<asio::ssl::context> tls_context;
  std::optional<asio::ssl::stream<tcp::socket>> tls;
  asio::steady_timer watchdog{ioc};
  bool timed_out = false;
  bool keep = false;  // the last answer allows another request on this connection

  tcp::socket& lowest() { return tls ? tls->next_layer() : socket; }

  void arm(Clock::time_point deadline) {
    watchdog.expires_at(deadline);
    watchdog.async_wait([this](beast::error_code ec) {
      // Cancelled (re-armed or finished). The expiry check covers a wait that completed just as
      // the coroutine re-armed the timer: that completion is stale and must not kill the socket.
      if (ec || watchdog.expiry() > Clock::now()) return;
      timed_out = true;
      resolver.cancel();
      beast::error_code ignored;
      lowest().shutdown(tcp::socket::shutdown_both, ignored);
      lowest().close(ignored);
    });
  }

  void disarm() { watchdog.cancel(); }
};

struct Target {
  std::string host;
  std::string port;
  std::string host_header;
  std::string prefix;
  bool tls = false;
  std::string ca_file;  // "" = the system's trust store
};

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// Sets up the exchange's TLS stream: TLS 1.2 or later, the peer verified against the CA file
// or the system store, its name checked against the host (RFC 6125), SNI sent for names.
std::optional<std::string> prepare_tls(Exchange& ex, const Target& t) {
  ex.tls_context.emplace(asio::ssl::context::tls_client);
  auto& ctx = *ex.tls_context;
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                  asio::ssl::context::no_tlsv1_1);
  beast::error_code ec;
  if (t.ca_file.empty())
    ctx.set_default_verify_paths(ec);
  else
    ctx.load_verify_file(t.ca_file, ec);
  if (ec)
    return "cannot load the CA bundle " +
           (t.ca_file.empty() ? std::string("of the system") : "PODIUM_CA_FILE=" + t.ca_file) +
           ": " + ec.message();
  ctx.set_verify_mode(asio::ssl::verify_peer);
  ex.tls.emplace(ex.ioc, ctx);
  ex.tls->set_verify_callback(asio::ssl::host_name_verification(t.host));
  // SSL_set_tlsext_host_name is a macro with a C cast; this is what it expands to.
  if (!is_ip_literal(t.host) &&
      SSL_ctrl(ex.tls->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(t.host.c_str())) != 1)
    return "cannot set the TLS server name " + t.host;
  return std::nullopt;
}

std::string handshake_failure(const Target& t, const beast::error_code& ec) {
  std::string m = "TLS handshake with " + t.host + ":" + t.port + " failed: " + ec.message();
  if (ec.message().find("certificate verify failed") != std::string::npos)
    m += " (the server's certificate is not signed by a CA this client trusts, or does not "
         "name " +
         t.host + "; set PODIUM_CA_FILE to the CA bundle that signed it)";
  return m;
}

// Runs a coroutine on the exchange's io_context to completion. Exceptions cannot escape:
// the coroutines report errors through out-parameters, and anything unexpected (bad_alloc)
// is turned into an error string here.
template <typename Awaitable>
std::optional<std::string> run_exchange(Exchange& ex, Awaitable&& work) {
  std::optional<std::string> failure;
  try {
    asio::co_spawn(ex.ioc, std::forward<Awaitable>(work), [&](std::exception_ptr e) {
      ex.disarm();
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& err) {
        failure = std::string("internal client error: ") + err.what();
      } catch (...) {
        failure = "internal client error";
      }
    });
    ex.ioc.run();
  } catch (const std::exception& err) {
    failure = std::string("internal client error: ") + err.what();
  } catch (...) {
    failure = "internal client error";
  }
  return failure;
}

// Resolves and connects; returns an error message or nullopt.
asio::awaitable<std::optional<std::string>> connect(Exchange& ex, const Target& t,
                                                    std::chrono::milliseconds budget) {
  const std::string where = t.host + ":" + t.port;
  auto [rec, endpoints] = co_await ex.resolver.async_resolve(t.host, t.port, kNoThrow);
  if (ex.timed_out)
    co_return "timed out after " + describe_duration(budget) + " resolving " + t.host;
  if (rec) co_return "cannot resolve " + t.host + ": " + rec.message();
  if (t.tls) {
    if (auto err = prepare_tls(ex, t)) co_return *err;
  }
  auto [cec, ep] = co_await asio::async_connect(ex.lowest(), endpoints, kNoThrow);
  (void)ep;
  if (ex.timed_out)
    co_return "timed out after " + describe_duration(budget) + " connecting to " + where;
  if (cec) co_return "cannot connect to " + where + ": " + cec.message();
  if (t.tls) {
    auto [hec] = co_await ex.tls->async_handshake(asio::ssl::stream_base::client, kNoThrow);
    if (ex.timed_out)
      co_return "timed out after " + describe_duration(budget) + " in the TLS handshake with " +
          where;
    if (hec) co_return handshake_failure(t, hec);
  }
  co_return std::nullopt;
}

HttpResponse to_response(const http::response_header<>& h, std::string body) {
  HttpResponse r;
  r.status = static_cast<int>(h.result_int());
  for (const auto& field : h) {
    r.headers.emplace_back(lower(std::string(field.name_string())), std::string(field.value()));
  }
  r.body = std::move(body);
  return r;
}

template <class Stream>
asio::awaitable<void> request_on(Stream& stream, Exchange& ex, const Target& t,
                                 http::request<http::string_body>& req,
                                 const RequestOptions& options, HttpClient::Result& result);

asio::awaitable<void> do_request(Exchange& ex, const Target& t,
                                 http::request<http::string_body>& req,
                                 const RequestOptions& options, HttpClient::Result& result) {
  if (auto err = co_await connect(ex, t, options.timeout)) {
    HttpError e;
    e.message = std::move(*err);
    e.timed_out = ex.timed_out;
    result.error = std::move(e);
    co_return;
  }
  if (ex.tls)
    co_await request_on(*ex.tls, ex, t, req, options, result);
  else
    co_await request_on(ex.socket, ex, t, req, options, result);
}

template <class Stream>
asio::awaitable<void> request_on(Stream& stream, Exchange& ex, const Target& t,
                                 http::request<http::string_body>& req,
                                 const RequestOptions& options, HttpClient::Result& result) {
  const std::string where = t.host + ":" + t.port;
  const auto fail = [&](std::string message) {
    HttpError e;
    e.message = std::move(message);
    e.timed_out = ex.timed_out;
    result.error = std::move(e);
  };
  const std::string timeout_text = "timed out after " + describe_duration(options.timeout);

  auto [wec, written] = co_await http::async_write(stream, req, kNoThrow);
  (void)written;
  if (ex.timed_out) {
    fail(timeout_text + " sending the request to " + where);
    co_return;
  }
  if (wec) {
    fail("cannot send the request to " + where + ": " + wec.message());
    co_return;
  }

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(static_cast<std::uint64_t>(options.max_response_bytes));
  if (req.method() == http::verb::head) parser.skip(true);
  auto [rec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  (void)read;
  if (ex.timed_out) {
    fail(timeout_text + " waiting for the response from " + where);
    co_return;
  }
  if (rec == http::error::body_limit) {
    fail("response from " + where + " exceeds the limit of " +
         std::to_string(options.max_response_bytes) + " bytes");
    co_return;
  }
  if (rec) {
    fail("cannot read the response from " + where + ": " + rec.message());
    co_return;
  }
  auto message = parser.release();
  ex.keep = req.keep_alive() && message.keep_alive();
  result.response = to_response(message.base(), std::move(message.body()));
  if (!ex.keep) {
    beast::error_code ignored;
    ex.lowest().shutdown(tcp::socket::shutdown_both, ignored);
  }
}

// The same exchange on a connection a pool kept open.
asio::awaitable<void> do_request_open(Exchange& ex, const Target& t,
                                      http::request<http::string_body>& req,
                                      const RequestOptions& options, HttpClient::Result& result) {
  if (ex.tls)
    co_await request_on(*ex.tls, ex, t, req, options, result);
  else
    co_await request_on(ex.socket, ex, t, req, options, result);
}

template <class Stream>
asio::awaitable<void> stream_on(Stream& stream, Exchange& ex, const Target& t,
                                http::request<http::empty_body>& req,
                                std::chrono::milliseconds idle, const SseParser::Handler& on_event,
                                std::optional<HttpError>& result);

asio::awaitable<void> do_stream(Exchange& ex, const Target& t, http::request<http::empty_body>& req,
                                std::chrono::milliseconds idle, const SseParser::Handler& on_event,
                                std::optional<HttpError>& result) {
  if (auto err = co_await connect(ex, t, idle)) {
    HttpError e;
    e.message = std::move(*err);
    e.timed_out = ex.timed_out;
    result = std::move(e);
    co_return;
  }
  if (ex.tls)
    co_await stream_on(*ex.tls, ex, t, req, idle, on_event, result);
  else
    co_await stream_on(ex.socket, ex, t, req, idle, on_event, result);
}

template <class Stream>
asio::awaitable<void> stream_on(Stream& stream, Exchange& ex, const Target& t,
                                http::request<http::empty_body>& req,
                                std::chrono::milliseconds idle, const SseParser::Handler& on_event,
                                std::optional<HttpError>& result) {
  const std::string where = t.host + ":" + t.port;
  const auto fail = [&](std::string message) {
    HttpError e;
    e.message = std::move(message);
    e.timed_out = ex.timed_out;
    result = std::move(e);
  };
  const std::string idle_text = "no data for " + describe_duration(idle);

  ex.arm(Clock::now() + idle);
  auto [wec, written] = co_await http::async_write(stream, req, kNoThrow);
  (void)written;
  if (ex.timed_out) {
    fail(idle_text + " sending the request to " + where);
    co_return;
  }
  if (wec) {
    fail("cannot send the request to " + where + ": " + wec.message());
    co_return;
  }

  ex.arm(Clock::now() + idle);
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream has no size bound
  auto [hec, hread] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
  (void)hread;
  if (ex.timed_out) {
    fail(idle_text + " waiting for the response from " + where);
    co_return;
  }
  if (hec) {
    fail("cannot read the response from " + where + ": " + hec.message());
    co_return;
  }
  const int status = static_cast<int>(parser.get().result_int());
  const bool refused = status < 200 || status >= 300;

  std::array<char, 16 * 1024> chunk{};
  std::string error_body;
  SseParser sse;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    ex.arm(Clock::now() + idle);
    auto [ec, n] = co_await http::async_read_some(stream, buffer, parser, kNoThrow);
    (void)n;
    if (ex.timed_out) {
      fail(idle_text + " on the event stream from " + where);
      co_return;
    }
    if (ec == http::error::need_buffer) ec = {};  // the chunk buffer is full: normal
    const size_t got = chunk.size() - parser.get().body().size;
    if (refused) {
      error_body.append(chunk.data(), std::min(got, kErrorBodyLimit - std::min(kErrorBodyLimit,
                                                                               error_body.size())));
    } else if (got > 0 && !sse.feed(std::string_view(chunk.data(), got), on_event)) {
      co_return;  // the caller has seen enough
    }
    // The server closed (over TLS, maybe without a close_notify: the chunked framing already
    // told where the body ends).
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::ssl::error::stream_truncated)
      break;
    if (ec) {
      if (refused) break;  // report the status, not the I/O error after it
      fail("event stream from " + where + " broke: " + ec.message());
      co_return;
    }
    if (refused && error_body.size() >= kErrorBodyLimit) break;
  }
  if (refused) {
    HttpError e;
    e.message = "server answered " + std::to_string(status) + " to the event stream request";
    e.status = status;
    e.body = std::move(error_body);
    result = std::move(e);
  }
}

}  // namespace

std::optional<std::string> HttpResponse::header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return std::nullopt;
}

struct ConnectionPool::Impl {
  mutable std::mutex mu;
  size_t max_idle;
  std::uint64_t connects = 0;
  // Idle connections by target ("https://host:port"): a pool may be shared across servers.
  std::vector<std::pair<std::string, std::unique_ptr<Exchange>>> idle;

  std::unique_ptr<Exchange> take(const std::string& key) {
    std::lock_guard lock(mu);
    for (auto it = idle.rbegin(); it != idle.rend(); ++it) {
      if (it->first != key) continue;
      auto ex = std::move(it->second);
      idle.erase(std::next(it).base());
      return ex;
    }
    return nullptr;
  }
  void put(const std::string& key, std::unique_ptr<Exchange> ex) {
    std::lock_guard lock(mu);
    if (idle.size() >= max_idle) idle.erase(idle.begin());  // the oldest goes
    idle.emplace_back(key, std::move(ex));
  }
};

ConnectionPool::ConnectionPool(size_t max_idle) : impl(std::make_unique<Impl>()) {
  impl->max_idle = std::max<size_t>(1, max_idle);
}
ConnectionPool::~ConnectionPool() = default;
size_t ConnectionPool::idle() const {
  std::lock_guard lock(impl->mu);
  return impl->idle.size();
}
std::uint64_t ConnectionPool::connects() const {
  std::lock_guard lock(impl->mu);
  return impl->connects;
}

HttpClient::HttpClient(std::string base_url, std::string bearer_token)
    : base_url_(std::move(base_url)), token_(std::move(bearer_token)) {
  std::string error;
  if (auto parsed = parse_base_url(base_url_, &error)) {
    host_ = std::move(parsed->host);
    port_ = std::move(parsed->port);
    prefix_ = std::move(parsed->prefix);
    tls_ = parsed->tls;
    if (tls_) {
      const char* ca = std::getenv("PODIUM_CA_FILE");
      if (ca) ca_file_ = ca;
    }
  } else {
    url_error_ = "invalid server URL '" + base_url_ + "': " + error;
  }
}

namespace {

Target make_target(const std::string& host, const std::string& port, const std::string& prefix,
                   bool tls, const std::string& ca_file) {
  Target t;
  t.host = host;
  t.port = port;
  const bool v6 = host.find(':') != std::string::npos;
  t.host_header = v6 ? "[" + host + "]" : host;
  if (port != (tls ? "443" : "80")) t.host_header += ":" + port;
  t.prefix = prefix;
  t.tls = tls;
  t.ca_file = ca_file;
  return t;
}

std::string join(const std::string& prefix, const std::string& path) {
  if (path.empty()) return prefix.empty() ? "/" : prefix;
  if (path.front() == '/') return prefix + path;
  return prefix + "/" + path;
}

std::string user_agent() {
  return "podium/" + std::string(client_version());
}

}  // namespace

HttpClient::Result HttpClient::request(const std::string& method, const std::string& path_and_query,
                                       const std::string& body,
                                       const RequestOptions& options) const {
  Result result;
  if (!url_error_.empty()) {
    result.error = HttpError{url_error_};
    return result;
  }
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    result.error = HttpError{"unsupported HTTP method '" + method + "'"};
    return result;
  }
  const Target target = make_target(host_, port_, prefix_, tls_, ca_file_);

  http::request<http::string_body> req{verb, join(target.prefix, path_and_query), 11};
  req.set(http::field::host, target.host_header);
  req.set(http::field::user_agent, user_agent());
  req.set(http::field::accept, "application/json");
  if (!pool_) req.set(http::field::connection, "close");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  // Extra headers come last so that a caller can override Accept or Content-Type.
  // Beast throws on a header value of 64 KiB or more; this client promises values, not throws.
  try {
    for (const auto& [name, value] : options.headers) req.set(name, value);
  } catch (const std::exception& e) {
    result.error = HttpError{std::string("cannot send header: ") + e.what()};
    return result;
  }
  req.prepare_payload();

  if (!pool_) {
    Exchange ex;
    ex.arm(Clock::now() + options.timeout);
    auto failure = run_exchange(ex, do_request(ex, target, req, options, result));
    if (failure) {
      result.response.reset();
      result.error = HttpError{*failure};
    }
    return result;
  }

  const std::string key = (target.tls ? "https://" : "http://") + target.host + ":" + target.port;
  const auto deadline = Clock::now() + options.timeout;
  for (int attempt = 0; attempt < 2; ++attempt) {
    result = Result{};
    std::unique_ptr<Exchange> ex = attempt == 0 ? pool_->impl->take(key) : nullptr;
    const bool reused = ex != nullptr;
    if (!ex) {
      ex = std::make_unique<Exchange>();
      std::lock_guard lock(pool_->impl->mu);
      ++pool_->impl->connects;
    } else {
      ex->ioc.restart();
    }
    ex->timed_out = false;
    ex->keep = false;
    ex->arm(deadline);
    auto failure = run_exchange(*ex, reused ? do_request_open(*ex, target, req, options, result)
                                            : do_request(*ex, target, req, options, result));
    if (failure) {
      result.response.reset();
      result.error = HttpError{*failure};
    }
    // A kept connection the server closed while it was idle: no answer came. Once more, fresh.
    if (reused && !result.response && !ex->timed_out) continue;
    if (result.response && ex->keep && !failure) pool_->impl->put(key, std::move(ex));
    return result;
  }
  return result;
}

std::optional<HttpError> HttpClient::stream_events(
    const std::string& path,
    const std::function<bool(const std::string&, const std::string&)>& on_event,
    std::chrono::milliseconds idle_timeout) const {
  if (!url_error_.empty()) return HttpError{url_error_};
  const Target target = make_target(host_, port_, prefix_, tls_, ca_file_);

  http::request<http::empty_body> req{http::verb::get, join(target.prefix, path), 11};
  req.set(http::field::host, target.host_header);
  req.set(http::field::user_agent, user_agent());
  req.set(http::field::accept, "text/event-stream");
  req.set(http::field::cache_control, "no-cache");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);

  std::optional<HttpError> result;
  Exchange ex;
  ex.arm(Clock::now() + idle_timeout);
  auto failure = run_exchange(ex, do_stream(ex, target, req, idle_timeout, on_event, result));
  if (failure) return HttpError{*failure};
  return result;
}

}  // namespace podium::client
