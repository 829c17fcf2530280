#pragma once
// A small synchronous HTTP/1.1 client for Podium's REST API, used by the `podium` CLI, by
// podium-worker and by the integration/e2e tests. Beast is confined to http_client.cpp.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
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
  std::string message;  // "connection refused to 127.0.0.1:8080", "timed out after 30s", ...
};

struct RequestOptions {
  std::chrono::milliseconds timeout{30000};   // whole exchange: connect, write, read
  size_t max_response_bytes = 64 * 1024 * 1024;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

class HttpClient {
 public:
  // base_url: "http://host:port" (a path prefix is allowed and kept). https is not supported yet.
  explicit HttpClient(std::string base_url, std::string bearer_token = {});

  // Throws nothing: a transport failure comes back as HttpError in the result.
  struct Result {
    std::optional<HttpResponse> response;
    std::optional<HttpError> error;
    bool ok() const { return response.has_value(); }
  };
  Result request(const std::string& method, const std::string& path_and_query,
                 const std::string& body = {}, const RequestOptions& options = {}) const;
  Result get(const std::string& path, const RequestOptions& o = {}) const { return request("GET", path, {}, o); }
  Result post(const std::string& path, const std::string& json, const RequestOptions& o = {}) const {
    return request("POST", path, json, o);
  }
  Result del(const std::string& path, const RequestOptions& o = {}) const { return request("DELETE", path, {}, o); }

  // Follows a text/event-stream; calls on_event(event_name, data) per event until it returns
  // false, the stream ends, or the timeout (idle time between bytes) passes.
  std::optional<HttpError> stream_events(
      const std::string& path, const std::function<bool(const std::string&, const std::string&)>& on_event,
      std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(60000)) const;

  const std::string& base_url() const { return base_url_; }

 private:
  std::string base_url_;
  std::string host_;
  std::string port_;
  std::string prefix_;
  std::string token_;
};

}  // namespace podium::client
