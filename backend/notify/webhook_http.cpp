// The only translation unit of backend/notify with Beast/Asio/OpenSSL (heavy to compile). One
// private io_context per request runs a C++20 coroutine; one watchdog timer bounds it, armed
// first with the connect deadline and then with the whole exchange's: when it fires it cancels
// the resolver and closes the socket, and the coroutine reports the timeout.

#include "backend/notify/webhook_http.h"

// GCC reports -Wnull-dereference inside Asio's scheduler once inlined into coroutines: false
// positives in Boost code (as in engine/client/http_client.cpp). Confined to this file.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <memory>

namespace podium::notify {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::uint32_t kHeaderLimit = 16 * 1024;

struct Exchange {
  asio::io_context ioc{1};
  tcp::resolver resolver{ioc};
  tcp::socket socket{ioc};
  std::optional<asio::ssl::context> tls_context;
  std::optional<asio::ssl::stream<tcp::socket>> tls;
  asio::steady_timer watchdog{ioc};
  bool timed_out = false;

  tcp::socket& lowest() { return tls ? tls->next_layer() : socket; }

  void arm(Clock::time_point deadline) {
    watchdog.expires_at(deadline);
    watchdog.async_wait([this](beast::error_code ec) {
      if (ec || watchdog.expiry() > Clock::now()) return;  // re-armed or finished
      timed_out = true;
      resolver.cancel();
      beast::error_code ignored;
      lowest().shutdown(tcp::socket::shutdown_both, ignored);
      lowest().close(ignored);
    });
  }
};

std::string ms_text(std::chrono::milliseconds d) {
  return std::to_string(d.count()) + " ms";
}

template <typename Awaitable>
std::optional<std::string> run_exchange(Exchange& ex, Awaitable&& work) {
  std::optional<std::string> failure;
  try {
    asio::co_spawn(ex.ioc, std::forward<Awaitable>(work), [&](std::exception_ptr e) {
      ex.watchdog.cancel();
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
  }
  return failure;
}

// Resolves and keeps the endpoints the guard lets through (all of them for an allowed host).
asio::awaitable<void> resolve_allowed(Exchange& ex, const TargetUrl& url, const AllowList& allow,
                                      std::chrono::milliseconds budget,
                                      std::vector<tcp::endpoint>& out, std::string& error) {
  auto [ec, results] = co_await ex.resolver.async_resolve(url.host, url.port, kNoThrow);
  if (ex.timed_out) {
    error = "timed out after " + ms_text(budget) + " resolving " + url.host;
    co_return;
  }
  if (ec) {
    error = "cannot resolve " + url.host + ": " + ec.message();
    co_return;
  }
  const bool host_allowed = allow.allows_host(url.host);
  std::string refused;
  for (const auto& entry : results) {
    const tcp::endpoint ep = entry.endpoint();
    const std::string ip = ep.address().to_string();
    if (!host_allowed && !allow.allows_address(ip)) {
      if (auto reason = forbidden_address_reason(ip)) {
        if (refused.empty()) refused = ip + " is " + *reason;
        continue;
      }
    }
    out.push_back(ep);
  }
  if (out.empty())
    error = url.host + " resolves to no address that may be called (" +
            (refused.empty() ? std::string("no address") : refused) +
            "; an admin may allow the host in webhooks.allow_hosts)";
}

std::optional<std::string> prepare_tls(Exchange& ex, const TargetUrl& url,
                                       const std::string& ca_file) {
  ex.tls_context.emplace(asio::ssl::context::tls_client);
  auto& ctx = *ex.tls_context;
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                  asio::ssl::context::no_tlsv1_1);
  beast::error_code ec;
  if (ca_file.empty())
    ctx.set_default_verify_paths(ec);
  else
    ctx.load_verify_file(ca_file, ec);
  if (ec) return "cannot load the CA bundle: " + ec.message();
  ctx.set_verify_mode(asio::ssl::verify_peer);
  ex.tls.emplace(ex.ioc, ctx);
  ex.tls->set_verify_callback(asio::ssl::host_name_verification(url.host));
  beast::error_code literal;
  asio::ip::make_address(url.host, literal);
  // SNI for names (SSL_set_tlsext_host_name is a macro with a C cast; this is its expansion).
  if (literal && SSL_ctrl(ex.tls->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME,
                          TLSEXT_NAMETYPE_host_name, const_cast<char*>(url.host.c_str())) != 1)
    return "cannot set the TLS server name " + url.host;
  return std::nullopt;
}

template <class Stream>
asio::awaitable<void> exchange_on(Stream& stream, Exchange& ex,
                                  http::request<http::string_body>& req, const HttpLimits& limits,
                                  PostResult& result) {
  const std::string timeout_text = "timed out after " + ms_text(limits.total_timeout);
  auto [wec, written] = co_await http::async_write(stream, req, kNoThrow);
  (void)written;
  if (ex.timed_out || wec) {
    result.error = ex.timed_out ? timeout_text + " sending the request"
                                : "cannot send the request: " + wec.message();
    co_return;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(static_cast<std::uint64_t>(limits.max_response_bytes));
  auto [rec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  (void)read;
  if (ex.timed_out) {
    result.error = timeout_text + " waiting for the response";
    co_return;
  }
  if (rec == http::error::body_limit) {
    // The status line arrived: the receiver answered, only its body is too long to read.
    result.status = static_cast<int>(parser.get().result_int());
    if (!result.delivered())
      result.error = "response larger than " + std::to_string(limits.max_response_bytes) + " bytes";
    co_return;
  }
  if (rec) {
    result.error = "cannot read the response: " + rec.message();
    co_return;
  }
  result.status = static_cast<int>(parser.get().result_int());
  if (!result.delivered()) result.error = "answered HTTP " + std::to_string(result.status);
  beast::error_code ignored;
  ex.lowest().shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> do_post(Exchange& ex, const TargetUrl& url, const AllowList& allow,
                              http::request<http::string_body>& req, const HttpLimits& limits,
                              Clock::time_point started, PostResult& result) {
  std::vector<tcp::endpoint> endpoints;
  co_await resolve_allowed(ex, url, allow, limits.connect_timeout, endpoints, result.error);
  if (!result.error.empty()) co_return;
  if (url.tls) {
    if (auto err = prepare_tls(ex, url, limits.ca_file)) {
      result.error = *err;
      co_return;
    }
  }
  // Only the checked endpoints: no second lookup between the check and the connect.
  auto [cec, ep] = co_await asio::async_connect(ex.lowest(), endpoints, kNoThrow);
  if (ex.timed_out || cec) {
    result.error = ex.timed_out
                       ? "timed out after " + ms_text(limits.connect_timeout) + " connecting to " +
                             url.host + ":" + url.port
                       : "cannot connect to " + url.host + ":" + url.port + ": " + cec.message();
    co_return;
  }
  result.address = ep.address().to_string();
  if (url.tls) {
    auto [hec] = co_await ex.tls->async_handshake(asio::ssl::stream_base::client, kNoThrow);
    if (ex.timed_out || hec) {
      result.error = ex.timed_out ? "timed out in the TLS handshake"
                                  : "TLS handshake failed: " + hec.message();
      co_return;
    }
  }
  ex.arm(started + limits.total_timeout);
  if (ex.tls)
    co_await exchange_on(*ex.tls, ex, req, limits, result);
  else
    co_await exchange_on(ex.socket, ex, req, limits, result);
}

}  // namespace

ResolvedTarget resolve_target(const TargetUrl& url, const AllowList& allow,
                              std::chrono::milliseconds timeout) {
  Exchange ex;
  ResolvedTarget out;
  std::vector<tcp::endpoint> endpoints;
  ex.arm(Clock::now() + timeout);
  if (auto failure =
          run_exchange(ex, resolve_allowed(ex, url, allow, timeout, endpoints, out.error)))
    out.error = *failure;
  if (out.error.empty())
    for (const auto& ep : endpoints) out.addresses.push_back(ep.address().to_string());
  return out;
}

PostResult post_webhook(const TargetUrl& url, const AllowList& allow,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::string& body, const HttpLimits& limits) {
  PostResult result;
  try {
    http::request<http::string_body> req{http::verb::post, url.target, 11};
    req.set(http::field::host, url.host_header);
    req.set(http::field::user_agent, "podium-webhooks");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::connection, "close");
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body() = body;
    req.prepare_payload();
    Exchange ex;
    const auto started = Clock::now();
    ex.arm(started + std::min(limits.connect_timeout, limits.total_timeout));
    if (auto failure = run_exchange(ex, do_post(ex, url, allow, req, limits, started, result)))
      result.error = *failure;
  } catch (const std::exception& e) {
    result.error = std::string("internal client error: ") + e.what();
  }
  if (!result.delivered() && result.error.empty()) result.error = "no answer";
  return result;
}

}  // namespace podium::notify
