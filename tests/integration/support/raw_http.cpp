#include "tests/integration/support/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <regex>

namespace podium::it {

using Clock = std::chrono::steady_clock;

RawSocket::RawSocket(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) close();
}

RawSocket::~RawSocket() {
  close();
}

void RawSocket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawSocket::send_all(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

bool RawSocket::wait_closed(std::chrono::milliseconds wait) {
  if (fd_ < 0) return true;
  const auto deadline = Clock::now() + wait;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      received_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    return true;  // EOF or reset
  }
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses `text` into r when it holds a complete response; false when more bytes are needed.
bool parse_response(const std::string& text, bool eof, Reply& r) {
  const size_t head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  const std::string head = text.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
    r.error = "not an HTTP response: " + status_line;
    return true;
  }
  r.status = std::atoi(status_line.substr(9, 3).c_str());
  r.headers.clear();
  std::optional<size_t> length;
  while (line_end != std::string::npos) {
    const size_t next = head.find("\r\n", line_end + 2);
    const std::string line = head.substr(
        line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers.emplace_back(lower(line.substr(0, colon)), value);
      if (lower(line.substr(0, colon)) == "content-length") length = std::stoul(value);
    }
    line_end = next;
  }
  const std::string body = text.substr(head_end + 4);
  if (length) {
    if (body.size() < *length) return false;
    r.body = body.substr(0, *length);
  } else {
    if (!eof) return false;
    r.body = body;
  }
  r.json = nlohmann::json::parse(r.body, nullptr, false);
  return true;
}

}  // namespace

Reply RawSocket::read_reply(std::chrono::milliseconds timeout) {
  Reply r;
  r.method = "RAW";
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  bool eof = false;
  for (;;) {
    if (parse_response(received_, eof, r)) break;
    if (eof || fd_ < 0) {
      r.status = 0;
      r.error = received_.empty() ? "connection closed without a response" : "incomplete response";
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.error = "timed out waiting for the response";
      break;
    }
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[16384];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got > 0) {
      received_.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      eof = true;
    }
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return r;
}

Reply raw_exchange(int port, const std::string& request, std::chrono::milliseconds timeout) {
  RawSocket s(port);
  Reply r;
  r.method = "RAW";
  if (!s.ok()) {
    r.error = "cannot connect to 127.0.0.1:" + std::to_string(port);
    return r;
  }
  s.send_all(request);  // a server that answers early may close before everything is sent
  r = s.read_reply(timeout);
  const std::string line = request.substr(0, request.find("\r\n"));
  r.path = line.substr(0, 80);
  // A well-formed HTTP/1.1 request line names an operation of the contract: its answer is held to
  // it like any other (what answers junk or another HTTP version is the HTTP layer's own).
  static const std::regex kRequestLine(R"(([A-Z]+) (/\S*) HTTP/1\.1)");
  std::smatch m;
  if (r.status != 0 && std::regex_match(line, m, kRequestLine)) {
    r.method = m[1];
    r.path = m[2];
    check_against_contract(r);
  }
  return r;
}

}  // namespace podium::it
