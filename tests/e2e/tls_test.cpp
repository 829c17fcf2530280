// Issue 13 (TLS end to end): podium-server with a certificate from a test CA serves HTTPS; a
// worker and the CLI that trust the CA (PODIUM_CA_FILE) connect and a 2-host reference run
// succeeds; without the CA both refuse with an error that says what to do; the session cookie
// is Secure; SIGHUP loads a new certificate for new connections.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

int sh(const std::string& command, std::string* output = nullptr) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// An HTTPS exchange whose client finishes its TLS 1.3 handshake and sends its request in one TCP
// write, as TLS 1.3 clients often do (curl among them): the server's TLS layer reads the request
// together with the client's Finished message, so the socket is never readable again for it.
// The TLS is driven over memory BIOs so that the two leave in one segment every time.
class OneFlightHttpsClient {
 public:
  explicit OneFlightHttpsClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect failed");
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
    ssl_ = SSL_new(ctx_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl_, in_, out_);  // the SSL owns both BIOs from here
    SSL_set_connect_state(ssl_);
  }
  ~OneFlightHttpsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }
  OneFlightHttpsClient(const OneFlightHttpsClient&) = delete;
  OneFlightHttpsClient& operator=(const OneFlightHttpsClient&) = delete;

  // The response's text (status line first), or what went wrong; gives up after `deadline`.
  std::string exchange(const std::string& request, std::chrono::milliseconds deadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
      const int r = SSL_do_handshake(ssl_);
      if (r == 1) break;
      if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ) return "handshake failed";
      if (!flush() || !receive(until)) return "handshake: no answer";
    }
    // The client's Finished is still in the out BIO: the request joins it, and both go at once.
    if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0)
      return "write failed";
    if (!flush()) return "send failed";
    std::string response;
    char buf[4096];
    for (;;) {
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) {
        response.append(buf, static_cast<size_t>(n));
        continue;
      }
      const int err = SSL_get_error(ssl_, n);
      if (err == SSL_ERROR_ZERO_RETURN) return response;
      if (err != SSL_ERROR_WANT_READ) return response.empty() ? "read failed" : response;
      if (!receive(until)) return response.empty() ? "no response in time" : response;
    }
  }

 private:
  bool flush() {
    char buf[16384];
    int n;
    while ((n = BIO_read(out_, buf, sizeof buf)) > 0)
      if (::send(fd_, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) return false;
    return true;
  }
  bool receive(std::chrono::steady_clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    BIO_write(in_, buf, static_cast<int>(n));
    return true;
  }

  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

int port_of(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

// A CA and a server certificate it signed for localhost and 127.0.0.1 (EC P-256, 2 days).
struct TestPki {
  fs::path dir;
  fs::path ca() const { return dir / "ca.pem"; }
  fs::path cert() const { return dir / "server.pem"; }
  fs::path key() const { return dir / "server.key"; }

  static void issue(const fs::path& dir, const std::string& ca_name) {
    fs::create_directories(dir);
    const std::string d = "'" + dir.string() + "'";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(dir / "ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                      "basicConstraints=CA:FALSE\n"
                                      "keyUsage=digitalSignature,keyEncipherment\n"
                                      "extendedKeyUsage=serverAuth\n";
    std::string out;
    const std::string cmd =
        "cd " + d + " && openssl req -x509 " + ec +
        " -keyout ca.key -out ca.pem -days 2 -subj '/CN=" + ca_name + "' && openssl req " + ec +
        " -keyout server.key -out server.csr -subj /CN=localhost && openssl x509 -req -in "
        "server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile "
        "ext.cnf";
    if (sh(cmd, &out) != 0) throw std::runtime_error("openssl failed: " + out);
  }

  static const TestPki& get() {
    static const TestPki pki = [] {
      TestPki p{fs::temp_directory_path() /
                ("podium-tls-" + std::to_string(::getpid()) + "-" + it::random_hex().substr(0, 6))};
      issue(p.dir, "Podium Test CA");
      return p;
    }();
    return pki;
  }
};

class Tls : public E2eTest {
 protected:
  void SetUp() override {
    // This process's own API client trusts the test CA too.
    ::setenv("PODIUM_CA_FILE", TestPki::get().ca().c_str(), 1);
    E2eTest::SetUp();
  }
  void TearDown() override {
    E2eTest::TearDown();
    ::unsetenv("PODIUM_CA_FILE");
  }
  Settings settings() const override {
    const auto& pki = TestPki::get();
    return {.extra = {"tls.cert_file=" + pki.cert().string(), "tls.key_file=" + pki.key().string()},
            .worker_env = {{"PODIUM_CA_FILE", pki.ca().string()}}};
  }

  int cli(const std::string& args, bool with_ca, std::string* out) {
    std::string env = "PODIUM_SERVER='" + podium().url() + "' PODIUM_TOKEN='" +
                      podium().server().admin_token() + "' ";
    env += with_ca ? "PODIUM_CA_FILE='" + TestPki::get().ca().string() + "' " : "PODIUM_CA_FILE= ";
    return sh("env -u PODIUM_CA_FILE " + env + "'" + it::binary("podium").string() + "' " + args,
              out);
  }
};

TEST_F(Tls, WorkerAndCliWithTheCaRunOverHttps) {
  ASSERT_EQ(podium().url().rfind("https://", 0), 0u) << podium().url();
  // The API over https, and a Secure session cookie.
  auto login =
      podium().anonymous().post("/api/v1/auth/login", {{"token", podium().server().admin_token()}});
  ASSERT_EQ(login.status, 200) << login;
  bool secure = false;
  for (const auto& [k, v] : login.headers)
    if (k == "set-cookie" && v.find("podium_session=") == 0)
      secure = v.find("; Secure") != std::string::npos;
  EXPECT_TRUE(secure) << "the session cookie must be Secure under https";

  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  const json run = submit(reference_spec(unique_name("tls"), cluster, dataset(), {.steps = 20}));
  json done;
  ASSERT_TRUE(wait_for_state(run["id"], "succeeded", 240s, &done));
  EXPECT_TRUE(metrics_steps_are(metrics(run["id"]), step_range(0, 20), true));

  std::string out;
  EXPECT_EQ(cli("runs list", true, &out), 0) << out;
  EXPECT_NE(out.find(run["id"].get<std::string>()), std::string::npos) << out;
}

TEST_F(Tls, WithoutTheCaTheWorkerAndTheCliRefuseClearly) {
  std::string out;
  EXPECT_NE(cli("runs list", false, &out), 0) << out;
  EXPECT_NE(out.find("certificate verify failed"), std::string::npos) << out;
  EXPECT_NE(out.find("PODIUM_CA_FILE"), std::string::npos) << out;

  const auto cluster = create_cluster("cpu-1", 1);
  WorkerOptions o;
  o.server_url = podium().url();
  o.token = podium().worker_token(cluster);
  o.cluster = cluster;
  o.workdir = dir() / "untrusting-agent";
  o.name = "untrusting";
  WorkerProcess w(o);  // no PODIUM_CA_FILE: the system store does not know the test CA
  w.spawn();
  auto log = [&] {
    std::ifstream in(w.log_path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_TRUE(
      eventually([&] { return log().find("certificate verify failed") != std::string::npos; }, 20s))
      << log();
  EXPECT_EQ(log().find("registered as"), std::string::npos) << log();
  auto workers = admin().get("/api/v1/clusters/" + cluster + "/workers");
  ASSERT_EQ(workers.status, 200) << workers;
  EXPECT_TRUE(workers.json["items"].empty()) << workers.json.dump();
  w.kill();
}

TEST_F(Tls, ARequestSentWithTheLastHandshakeMessageIsAnsweredAtOnce) {
  // Before the fix such a request waited for the keep-alive idle timeout (60 s) and got an
  // empty reply; curl over TLS 1.3 saw it about once in ten requests.
  for (int i = 0; i < 5; ++i) {
    OneFlightHttpsClient client(port_of(podium().url()));
    const std::string response = client.exchange(
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", 10s);
    EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << "connection " << i << ": " << response;
  }
}

TEST_F(Tls, SighupLoadsANewCertificateForNewConnections) {
  const auto& pki = TestPki::get();
  // A second CA's certificate over the same files; the old one must keep serving until SIGHUP.
  const fs::path next = pki.dir / "next";
  TestPki::issue(next, "Podium Test CA 2");
  fs::copy_file(pki.cert(), pki.dir / "server.pem.orig", fs::copy_options::overwrite_existing);
  fs::copy_file(pki.key(), pki.dir / "server.key.orig", fs::copy_options::overwrite_existing);
  fs::copy_file(next / "server.pem", pki.cert(), fs::copy_options::overwrite_existing);
  fs::copy_file(next / "server.key", pki.key(), fs::copy_options::overwrite_existing);
  EXPECT_EQ(podium().anonymous().get("/healthz").status, 200);  // still the first CA's
  ASSERT_EQ(::kill(podium().server().pid(), SIGHUP), 0);
  EXPECT_TRUE(eventually(
      [&] {
        ::setenv("PODIUM_CA_FILE", (next / "ca.pem").c_str(), 1);
        const bool ok = podium().anonymous().get("/healthz").status == 200;
        ::setenv("PODIUM_CA_FILE", pki.ca().c_str(), 1);
        return ok;
      },
      10s));
  EXPECT_NE(podium().anonymous().get("/healthz").status, 200) << "the old CA still verifies";
  fs::copy_file(pki.dir / "server.pem.orig", pki.cert(), fs::copy_options::overwrite_existing);
  fs::copy_file(pki.dir / "server.key.orig", pki.key(), fs::copy_options::overwrite_existing);
  ::kill(podium().server().pid(), SIGHUP);
}

}  // namespace
}  // namespace podium::e2e
