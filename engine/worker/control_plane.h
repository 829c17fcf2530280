#pragma once
// The agent's side of the agent protocol (docs/agent-protocol.md): one call per request, the
// answer classified so that callers decide between "done", "retry later" and "give up".

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace podium::worker {

struct ApiResult {
  enum class Kind {
    ok,         // 2xx
    transient,  // unreachable, timed out, 5xx, 408, 429: try again with backoff
    rejected,   // any other 4xx: trying the same request again will not help
  };
  Kind kind = Kind::transient;
  int status = 0;  // 0 when the server was not reached
  std::string body;
  std::string error;  // transport error, or a short description of the status

  bool ok() const { return kind == Kind::ok; }
  bool transient() const { return kind == Kind::transient; }
  // The problem+json detail (or title) of an error answer, else the raw body's start.
  std::string describe() const;
  // The body as JSON; a discarded value when it does not parse.
  nlohmann::json json() const;
};

ApiResult classify(int status, std::string body);

class ControlPlane {
 public:
  virtual ~ControlPlane() = default;
  // `path` is relative to /api/v1/agent/ ("register", "attempts/att_1/logs", …).
  virtual ApiResult call(const std::string& method, const std::string& path,
                         const std::string& body, std::chrono::milliseconds timeout) = 0;
  // The host's own credential from its registration: every call but "register" uses it instead
  // of the cluster's worker token. Thread-safe.
  virtual void set_credential(const std::string& credential) { (void)credential; }
  // A GET whose answer may be large (a code bundle): up to `max_bytes`. The default is call().
  virtual ApiResult download(const std::string& path, size_t max_bytes,
                             std::chrono::milliseconds timeout) {
    (void)max_bytes;
    return call("GET", path, {}, timeout);
  }
};

// The real one, over engine/client's HttpClient (Beast stays there).
std::shared_ptr<ControlPlane> make_http_control_plane(const std::string& server_url,
                                                      const std::string& token);

}  // namespace podium::worker
