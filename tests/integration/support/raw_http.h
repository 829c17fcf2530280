#pragma once
// Plain TCP sockets for tests that need what an HTTP client library will not do: slow clients,
// oversized or malformed requests, exact bytes on the wire.
//
//   RawSocket s(server.port());
//   s.send_all("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
//   Reply r = s.read_reply(5s);            // parsed status, headers, body (support/api.h)
//
//   Reply r = raw_exchange(server.port(), request_bytes);   // the same in one call

#include <chrono>
#include <string>

#include "tests/integration/support/api.h"

namespace podium::it {

class RawSocket {
 public:
  // Connects to 127.0.0.1:port; ok() is false when that fails.
  explicit RawSocket(int port);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // Sends everything; false when the peer closed or reset the connection.
  bool send_all(const std::string& bytes);
  // Waits up to `wait` for the peer to close (EOF or reset). Data that arrives meanwhile is
  // appended to received() and does not count as closing.
  bool wait_closed(std::chrono::milliseconds wait);
  // Reads one HTTP response (status line, headers, Content-Length body, or up to EOF) within
  // `timeout`. status 0 and error set when no complete head arrived.
  Reply read_reply(std::chrono::milliseconds timeout);
  const std::string& received() const { return received_; }
  void close();

 private:
  int fd_ = -1;
  std::string received_;
};

// Connect, send `request` (the peer closing early does not stop the read), read the reply.
Reply raw_exchange(int port, const std::string& request,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

}  // namespace podium::it
