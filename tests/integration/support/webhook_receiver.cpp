#include "tests/integration/support/webhook_receiver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <functional>
#include <stdexcept>

namespace podium::it {

namespace {

int listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port));
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Reads until `pred(buffer)` or EOF/timeout (5 s of silence).
bool read_until(int fd, std::string& buf, const std::function<bool(const std::string&)>& pred) {
  char chunk[4096];
  while (!pred(buf)) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    if (buf.size() > (1 << 20)) return false;
  }
  return true;
}

}  // namespace

WebhookReceiver::WebhookReceiver(int status) : status_(status) {
  listen_fd_ = listen_on(0);
  port_ = bound_port(listen_fd_);
  if (::pipe2(wake_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  thread_ = std::thread([this, fd = listen_fd_] { serve(fd); });
}

WebhookReceiver::~WebhookReceiver() {
  stop();
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void WebhookReceiver::set_status(int status) {
  std::lock_guard lock(mu_);
  status_ = status;
}

void WebhookReceiver::stop() {
  if (!thread_.joinable()) return;
  const char x = 'x';
  (void)!::write(wake_[1], &x, 1);
  thread_.join();
  char drain[16];
  (void)!::read(wake_[0], drain, sizeof drain);
  ::close(listen_fd_);
  listen_fd_ = -1;
}

void WebhookReceiver::start() {
  if (thread_.joinable()) return;
  listen_fd_ = listen_on(port_);
  thread_ = std::thread([this, fd = listen_fd_] { serve(fd); });
}

void WebhookReceiver::serve(int listen_fd) {
  while (true) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    handle(fd);
    ::close(fd);
  }
}

void WebhookReceiver::handle(int fd) {
  std::string buf;
  if (!read_until(fd, buf, [](const std::string& b) { return b.find("\r\n\r\n") != b.npos; }))
    return;
  const size_t head_end = buf.find("\r\n\r\n");
  ReceivedRequest r;
  size_t line_end = buf.find("\r\n");
  const std::string request_line = buf.substr(0, line_end);
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.find(' ', sp1 + 1);
  r.method = request_line.substr(0, sp1);
  r.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t pos = line_end + 2;
  while (pos < head_end) {
    const size_t end = buf.find("\r\n", pos);
    const std::string line = buf.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos)
      r.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
    pos = end + 2;
  }
  const size_t length =
      r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
  if (!read_until(fd, buf, [&](const std::string& b) { return b.size() >= head_end + 4 + length; }))
    return;
  r.body = buf.substr(head_end + 4, length);
  int status = 0;
  {
    std::lock_guard lock(mu_);
    status = status_;
    requests_.push_back(std::move(r));
  }
  const std::string answer = "HTTP/1.1 " + std::to_string(status) +
                             " X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
  (void)!::write(fd, answer.data(), answer.size());
}

std::vector<ReceivedRequest> WebhookReceiver::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool WebhookReceiver::wait_for(size_t count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (requests().size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return requests().size() >= count;
}

bool verify_podium_signature(const std::string& secret, const ReceivedRequest& r,
                             std::chrono::seconds skew) {
  auto it = r.headers.find("podium-signature");
  if (it == r.headers.end()) return false;
  const std::string& h = it->second;
  if (h.rfind("t=", 0) != 0) return false;
  const size_t comma = h.find(",v1=");
  if (comma == std::string::npos) return false;
  const std::string t = h.substr(2, comma - 2);
  const std::string v1 = h.substr(comma + 4);
  const long long ts = std::stoll(t);
  const long long now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  if (ts < now - skew.count() || ts > now + skew.count()) return false;
  const std::string message = t + "." + r.body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 0xf]);
  }
  return hex == v1;
}

}  // namespace podium::it
