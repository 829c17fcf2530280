#pragma once
// Plain request/response types shared by the HTTP layer (Beast, confined to backend/http)
// and the handlers (backend/api). Nothing here pulls in Boost.

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

// A body produced piece by piece (Server-Sent Events, long downloads). The HTTP layer calls
// next() on a worker thread until it returns false; each call may block for a bounded time and
// should return an empty chunk to let the layer check that the client is still there.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  virtual bool next(std::string& chunk) = 0;
};

struct Response {
  int status = 200;
  HeaderList headers;
  std::string body;
  std::shared_ptr<BodyStream> stream;  // when set, body is ignored and chunks are streamed

  void set_header(std::string name, std::string value);
  std::optional<std::string_view> header(std::string_view name) const;

  static Response json(int status, std::string body);
  static Response text(int status, std::string body, std::string content_type = "text/plain");
  static Response empty(int status);
};

// Percent-decoding and query parsing live here (not in Beast) so they are unit-testable.
// decode_percent returns nullopt for malformed escapes or an encoded NUL.
std::optional<std::string> decode_percent(std::string_view in, bool plus_is_space);
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q);

}  // namespace podium::http
