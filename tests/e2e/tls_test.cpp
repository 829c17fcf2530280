// Issue 13 (TLS end to end): podium-server with a certificate from a test CA serves HTTPS; a
// worker and the CLI that trust the CA (PODIUM_CA_FILE) connect and a 2-host reference run
// succeeds; without the CA both refuse with an error that says what to do; the session cookie
// is Secure; SIGHUP loads a new certificate for new connections.

#include <signal.h>
#include <sys/wait.h>

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
