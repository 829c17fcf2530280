#include "engine/worker/control_plane.h"

#include <mutex>

#include "engine/client/http_client.h"
#include "engine/core/text/json_text.h"

namespace podium::worker {

namespace {

// Answers of the agent API are small; a larger one is a misbehaving server.
constexpr size_t kMaxResponseBytes = 1024 * 1024;

class HttpControlPlane final : public ControlPlane {
 public:
  HttpControlPlane(const std::string& url, const std::string& token) : url_(url), token_(token) {}

  void set_credential(const std::string& credential) override {
    std::lock_guard lock(mu_);
    credential_ = credential;
  }

  ApiResult call(const std::string& method, const std::string& path, const std::string& body,
                 std::chrono::milliseconds timeout) override {
    return request(method, path, body, timeout, kMaxResponseBytes);
  }

  ApiResult download(const std::string& path, size_t max_bytes,
                     std::chrono::milliseconds timeout) override {
    return request("GET", path, {}, timeout, max_bytes);
  }

 private:
  ApiResult request(const std::string& method, const std::string& path, const std::string& body,
                    std::chrono::milliseconds timeout, size_t max_bytes) {
    client::RequestOptions options;
    options.timeout = timeout;
    options.max_response_bytes = max_bytes;
    std::string token;
    {
      std::lock_guard lock(mu_);
      token = path == "register" || credential_.empty() ? token_ : credential_;
    }
    client::HttpClient client(url_, token);
    client.use_pool(pool_);
    const auto result = client.request(method, "/api/v1/agent/" + path, body, options);
    if (!result.ok()) {
      ApiResult r;
      r.kind = ApiResult::Kind::transient;
      r.error = result.error ? result.error->message : "request failed";
      return r;
    }
    return classify(result.response->status, result.response->body);
  }

  const std::string url_;
  const std::string token_;  // the cluster's worker token: registration only
  // Keep-alive connections shared by the agent's threads (heartbeat, long-poll, uploads): no
  // new TCP connection, nor TLS handshake, per call. The protocol's calls are idempotent, so a
  // call on a connection the server had closed is safely sent again.
  const std::shared_ptr<client::ConnectionPool> pool_ = std::make_shared<client::ConnectionPool>(4);
  std::mutex mu_;
  std::string credential_;
};

}  // namespace

ApiResult classify(int status, std::string body) {
  ApiResult r;
  r.status = status;
  r.body = std::move(body);
  if (status >= 200 && status < 300) {
    r.kind = ApiResult::Kind::ok;
  } else if (status >= 500 || status == 408 || status == 429 || status < 100) {
    r.kind = ApiResult::Kind::transient;
    r.error = "HTTP " + std::to_string(status);
  } else {
    r.kind = ApiResult::Kind::rejected;
    r.error = "HTTP " + std::to_string(status);
  }
  return r;
}

std::string ApiResult::describe() const {
  if (status == 0) return error;
  std::string text = "HTTP " + std::to_string(status);
  const auto j = json();
  if (j.is_object()) {
    for (const char* key : {"detail", "title"}) {
      if (j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty()) {
        return text + ": " + j[key].get<std::string>();
      }
    }
  }
  if (!body.empty()) text += ": " + body.substr(0, 200);
  return text;
}

nlohmann::json ApiResult::json() const {
  return nlohmann::json::parse(body, nullptr, false);
}

std::shared_ptr<ControlPlane> make_http_control_plane(const std::string& server_url,
                                                      const std::string& token) {
  return std::make_shared<HttpControlPlane>(server_url, token);
}

}  // namespace podium::worker
