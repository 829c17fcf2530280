#pragma once
// A webhook receiver for tests: a small HTTP/1.1 server on 127.0.0.1 (its own thread, plain
// sockets) that keeps every POST it gets (headers, body) and answers each with `status`. It can
// be stopped and started again on the same port (a receiver that is down, then back).
//
//   WebhookReceiver rx;                         // listening on rx.port()
//   ... create a webhook to rx.url() with webhooks.allow_hosts=127.0.0.1 ...
//   rx.wait_for(2, 30s);
//   EXPECT_TRUE(verify_podium_signature(secret, rx.requests()[0]));

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace podium::it {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class WebhookReceiver {
 public:
  explicit WebhookReceiver(int status = 200);  // started, on a free port
  ~WebhookReceiver();
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  void set_status(int status);
  // Stops listening (connections are refused), keeps what was received.
  void stop();
  // Listens again on the same port.
  void start();

  std::vector<ReceivedRequest> requests() const;
  // Waits until at least `count` requests arrived; false on timeout.
  bool wait_for(size_t count, std::chrono::milliseconds timeout) const;

 private:
  void serve(int listen_fd);
  void handle(int fd);

  int port_ = 0;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe that ends serve()'s poll
  std::thread thread_;
  mutable std::mutex mu_;
  int status_;
  std::vector<ReceivedRequest> requests_;
};

// The Podium-Signature header of `r` is "t=<unix>,v1=<hex HMAC-SHA256(secret, t.body)>" (checked
// with OpenSSL's HMAC, independently of the server's signer) and t is within `skew` of now.
bool verify_podium_signature(const std::string& secret, const ReceivedRequest& r,
                             std::chrono::seconds skew = std::chrono::seconds(300));

}  // namespace podium::it
