#pragma once
// Plain request/response types shared by the HTTP layer (Beast, confined to backend/http)
// and the handlers (backend/api). Nothing here pulls in Boost.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podium::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;  // upper case, as sent: "GET", "POST", ...
  std::string target;  // raw request target, e.g. "/api/v1/runs?limit=5"
  std::string path;    // percent-decoded path without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  HeaderList headers;                                      // names lower-cased by the HTTP layer
  std::string body;
  std::string remote_address;
  std::string request_id;

  std::optional<std::string_view> header(std::string_view lower_name) const;
  std::optional<std::string> query_param(std::string_view name) const;
};

// A wait that holds no thread: the HTTP layer keeps the connection on a timer and registers it
// under `keys` ("channel:key", e.g. "podium_agents:wkr_1"); HttpServer::wake() of one of them,
// or the timeout, ends the wait. `fired` (may be empty) is asked once the wait is registered:
// true means a wake-up already came between the caller's last look and the registration.
struct Wait {
  std::vector<std::string> keys;
  std::chrono::milliseconds timeout{0};
  std::function<bool()> fired;
};

struct Response;

// A response that is not ready yet (an assignment long-poll): the HTTP layer parks the request
// as wait() says and calls resume() on a handler thread when the wait ends (timed_out: by its
// timeout, or because the server is stopping, rather than a wake-up); nullopt means "wait again"
// (wait() is asked anew). A stopping server answers 503 for a resume that does not answer.
class Deferred {
 public:
  virtual ~Deferred() = default;
  virtual Wait wait() = 0;
  virtual std::optional<Response> resume(bool timed_out) = 0;
};

// A body produced piece by piece (Server-Sent Events, long downloads). The HTTP layer calls
// next() on a handler thread until it returns false. An empty chunk with `true` means nothing
// now: the layer then asks idle() for a wait (no thread held meanwhile) and calls next() again
// when it ends; without one, next() is called again at once and should itself block briefly.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  virtual bool next(std::string& chunk) = 0;
  virtual std::optional<Wait> idle() { return std::nullopt; }
};

struct Response {
  int status = 200;
  HeaderList headers;
  std::string body;
  std::shared_ptr<BodyStream> stream;  // when set, body is ignored and chunks are streamed
  std::shared_ptr<Deferred> deferred;  // when set, the answer comes later (see Deferred)

  void set_header(std::string name, std::string value);
  std::optional<std::string_view> header(std::string_view name) const;

  static Response json(int status, std::string body);
  static Response text(int status, std::string body, std::string content_type = "text/plain");
  static Response empty(int status);
};

// Percent-decoding and query parsing live here (not in Beast) so they are unit-testable, and
// the sanitizer and fuzz builds (fuzz/router_fuzzer.cpp), which compile no Boost, cover them.
// Not Boost.URL: its strict RFC 3986 grammar would refuse targets served today (raw UTF-8 bytes,
// '{', '|'), and the adapter to it would be longer than these functions.
// decode_percent returns nullopt for malformed escapes or an encoded NUL.
std::optional<std::string> decode_percent(std::string_view in, bool plus_is_space);
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q);
// A request target in origin form ("/path?query") split into its decoded path and query; false
// (path and query untouched) for another form or a malformed escape: the HTTP layer's 400.
bool parse_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query);

}  // namespace podium::http
