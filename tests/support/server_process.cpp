#include "tests/support/server_process.h"

#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/integration/support/raw_http.h"

namespace podium::it {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kListeningLine = "podium-server listening on ";

// The port of "http://HOST:PORT" ("" until the line is complete), as text.
std::string port_text(const std::string& log) {
  const std::string url = text_after(log, kListeningLine);
  const auto colon = url.rfind(':');
  if (colon == std::string::npos) return "";
  try {
    return std::stoi(url.substr(colon + 1)) > 0 ? url.substr(colon + 1) : "";
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

ServerProcess::ServerProcess(ServerOptions options)
    : options_(std::move(options)),
      process_({.binary = options_.binary,
                .name = options_.name,
                .ready_timeout = options_.ready_timeout,
                .stop_timeout = options_.stop_timeout}) {}

ServerProcess::~ServerProcess() {
  process_.finish();
  if (!options_.data_dir.empty() || options_.database_url.empty()) {
    // An embedded PostgreSQL that a failed test left running under our data dir.
    const fs::path cluster = data_dir() / "postgres";
    std::error_code ec;
    if (fs::exists(cluster / "postmaster.pid", ec)) {
      run_shell("runuser -u postgres -- " + (postgres_bin_dir() / "pg_ctl").string() +
                " stop -D '" + cluster.string() + "' -m immediate -w >/dev/null 2>&1 || " +
                (postgres_bin_dir() / "pg_ctl").string() + " stop -D '" + cluster.string() +
                "' -m immediate -w >/dev/null 2>&1");
    }
  }
}

fs::path ServerProcess::data_dir() const {
  return options_.data_dir.empty() ? process_.dir() / "data" : options_.data_dir;
}

std::string ServerProcess::url() const {
  // Over HTTPS the certificate names "localhost" (tests/e2e/tls_test.cpp makes it so).
  return tls_ ? "https://localhost:" + std::to_string(port_)
              : "http://127.0.0.1:" + std::to_string(port_);
}

void ServerProcess::start() {
  spawn();
  wait_ready();
}

void ServerProcess::start_together(const std::vector<ServerProcess*>& servers) {
  for (auto* s : servers) s->spawn();
  for (auto* s : servers) s->wait_ready();
}

void ServerProcess::spawn() {
  std::vector<std::string> args = {process_.executable().string(), "--listen", "127.0.0.1:0"};
  if (!options_.database_url.empty()) {
    args.insert(args.end(), {"--database-url", options_.database_url});
  }
  args.insert(args.end(), {"--data-dir", data_dir().string()});
  if (!options_.admin_token.empty())
    args.insert(args.end(), {"--admin-token", options_.admin_token});
  for (const auto& s : options_.settings) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  port_ = 0;
  process_.spawn(args, options_.env);
}

void ServerProcess::wait_ready() {
  const std::string port =
      process_.wait_for(port_text, std::string("print \"") + kListeningLine + "...\"");
  port_ = std::stoi(port);
  tls_ = process_.log().find(std::string(kListeningLine) + "https://") != std::string::npos;
  // Over https the fixture has no client that trusts the test's certificate: the listening line,
  // printed once the database is reachable, is the readiness there.
  if (!tls_) wait_readyz();
}

void ServerProcess::wait_readyz() {
  const std::string request =
      "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  Reply last;
  for (;;) {
    last = raw_exchange(port_, request, std::min(process_.ready_time_left() + 1ms, 5000ms));
    if (last.status == 200) return;
    if (!process_.running())
      throw std::runtime_error(options_.name + " exited with status " +
                               std::to_string(process_.exit_status()) +
                               " before GET /readyz answered 200; log:\n" + log_tail(40));
    if (process_.ready_time_left() <= 0ms) {
      process_.kill();
      throw std::runtime_error(options_.name +
                               " listened but GET /readyz did not answer 200 within " +
                               std::to_string(options_.ready_timeout.count()) +
                               " ms (last: " + last.describe() + "); log:\n" + log_tail(40));
    }
    std::this_thread::sleep_for(20ms);
  }
}

int ServerProcess::terminate() {
  return process_.terminate();
}

int ServerProcess::kill() {
  return process_.kill();
}

bool ServerProcess::running() {
  return process_.running();
}

std::string ServerProcess::log() const {
  return process_.log();
}

std::string ServerProcess::log_tail(int lines) const {
  return process_.log_tail(lines);
}

int ServerProcess::count_log_lines(const std::string& text) const {
  std::istringstream in(log());
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (line.find(text) != std::string::npos) ++n;
  return n;
}

}  // namespace podium::it
