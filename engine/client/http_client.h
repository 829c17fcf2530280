#pragma once
// A small synchronous HTTP/1.1 client for Podium's REST API, used by the `podium` CLI, by
// podium-worker and by the integration/e2e tests. Beast is confined to http_client.cpp.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podium::client {

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::optional<std::string> header(const std::string& lower_name) const;
};

struct HttpError {
  HttpError() = default;
  // Not an aggregate: HttpError{"message"} must keep compiling warning-free now that the struct
  // has more fields (-Wmissing-field-initializers under -Werror).
  HttpError(std::string message_, int status_ = 0, std::string body_ = {}, bool timed_out_ = false)
      : message(std::move(message_)),
        status(status_),
        body(std::move(body_)),
        timed_out(timed_out_) {}

  std::string message;  // "connection refused to 127.0.0.1:8080", "timed out after 30s", ...
  // Set by stream_events when the server answered the stream request with a non-2xx status:
  // callers need the status (401, 404, ...) and the problem+json body to report it properly.
  // 0 means the failure was in the transport (resolve, connect, I/O, timeout, bad URL).
  int status = 0;
  std::string body;
  bool timed_out = false;  // the deadline (request) or the idle timeout (stream) passed
};

struct RequestOptions {
  std::chrono::milliseconds timeout{30000};  // whole exchange: connect, write, read
  size_t max_response_bytes = 64 * 1024 * 1024;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// The parts of a base URL "http://host[:port][/prefix]". A URL without "scheme://" is taken
// as http so that PODIUM_SERVER=127.0.0.1:8080 works as people type it.
struct BaseUrl {
  std::string host;    // without the brackets of an IPv6 literal
  std::string port;    // "80" ("443" for https) when the URL has none
  std::string prefix;  // "" or "/something" without a trailing slash
  bool tls = false;    // https://
};
// nullopt (and *error set when given) for other schemes, userinfo, query, fragment, a bad
// port, ...
std::optional<BaseUrl> parse_base_url(std::string_view url, std::string* error = nullptr);

// Percent-encodes everything except RFC 3986 unreserved characters, for a path segment or a
// query value ("runs/" + percent_encode(id)).
std::string percent_encode(std::string_view in);

// The version the client reports in its User-Agent ("podium/<version>").
std::string_view client_version();

// Incremental text/event-stream framing (WHATWG HTML "server-sent events"): feed() takes the
// bytes as they arrive, in chunks of any size (a line or a CRLF may be split across chunks),
// and calls the handler once per complete event. Comment lines (":...") and the id/retry
// fields are ignored; multi-line data is joined with '\n'; an event without data is not
// dispatched; the event name defaults to "message".
class SseParser {
 public:
  using Handler = std::function<bool(const std::string& event, const std::string& data)>;
  // Returns false as soon as the handler returns false (the rest of the chunk is dropped).
  bool feed(std::string_view bytes, const Handler& on_event);

 private:
  bool line(std::string_view l, const Handler& on_event);
  std::string partial_;       // bytes of an unfinished line
  bool last_was_cr_ = false;  // a '\n' right after a '\r' ends nothing new
  std::string event_;
  std::string data_;
  bool has_data_ = false;
};

// Idle keep-alive connections of one server, shared by the HttpClients given it (thread-safe).
// A request takes one (or connects), and puts it back when the answer allowed keep-alive. A
// request that fails on a reused connection before any answer arrived (the server closed it
// while idle) is sent once more on a fresh one: callers that pool use idempotent requests.
class ConnectionPool {
 public:
  explicit ConnectionPool(size_t max_idle = 4);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  size_t idle() const;
  std::uint64_t connects() const;  // connections opened through this pool so far

  struct Impl;
  std::unique_ptr<Impl> impl;
};

class HttpClient {
 public:
  // base_url: "http://host:port" or "https://host:port" (a path prefix is allowed and kept).
  // https verifies the server's certificate and name against PODIUM_CA_FILE (a PEM bundle) when
  // set, else against the system's trust store.
  // An unusable URL does not throw: every request then returns an HttpError naming the problem.
  explicit HttpClient(std::string base_url, std::string bearer_token = {});

  // Throws nothing: a transport failure comes back as HttpError in the result.
  struct Result {
    std::optional<HttpResponse> response;
    std::optional<HttpError> error;
    bool ok() const { return response.has_value(); }
  };
  Result request(const std::string& method, const std::string& path_and_query,
                 const std::string& body = {}, const RequestOptions& options = {}) const;
  Result get(const std::string& path, const RequestOptions& o = {}) const {
    return request("GET", path, {}, o);
  }
  Result post(const std::string& path, const std::string& json,
              const RequestOptions& o = {}) const {
    return request("POST", path, json, o);
  }
  Result del(const std::string& path, const RequestOptions& o = {}) const {
    return request("DELETE", path, {}, o);
  }

  // Follows a text/event-stream; calls on_event(event_name, data) per event until it returns
  // false, the stream ends, or the timeout (idle time between bytes) passes.
  // Returns nullopt when the handler stopped or the server ended the stream; an HttpError with
  // status set when the server refused the stream (non-2xx), with timed_out when idle too long.
  std::optional<HttpError> stream_events(
      const std::string& path,
      const std::function<bool(const std::string&, const std::string&)>& on_event,
      std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(60000)) const;

  const std::string& base_url() const { return base_url_; }

  // request() reuses the pool's connections (keep-alive) instead of one connection per call.
  // stream_events() never does.
  void use_pool(std::shared_ptr<ConnectionPool> pool) { pool_ = std::move(pool); }

 private:
  std::shared_ptr<ConnectionPool> pool_;
  std::string base_url_;
  std::string host_;
  std::string port_;
  std::string prefix_;
  std::string token_;
  bool tls_ = false;
  std::string ca_file_;
  std::string url_error_;  // non-empty when base_url_ did not parse
};

}  // namespace podium::client
