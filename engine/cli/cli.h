#pragma once
// The `podium` command-line client: entry point, configuration and the seam to the network.
// main() only wires the real environment into run_cli(); the tests drive run_cli() with a fake
// Transport, an injected environment and string streams.

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/cli/args.h"
#include "engine/client/http_client.h"

namespace podium::cli {

inline constexpr const char* kDefaultServer = "http://127.0.0.1:8080";

// What a command needs from the network: one request, or one event stream.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual client::HttpClient::Result request(const std::string& method, const std::string& path,
                                             const std::string& body) = 0;
  virtual std::optional<client::HttpError> stream(const std::string& path,
                                                  const client::SseParser::Handler& on_event) = 0;
};

struct ClientConfig {
  std::string server = kDefaultServer;
  std::string token;
  std::chrono::milliseconds timeout{30000};       // per request
  std::chrono::milliseconds idle_timeout{30000};  // `logs -f`: reconnect after this much silence
};

// The real Transport: engine/client's HttpClient.
class HttpTransport : public Transport {
 public:
  explicit HttpTransport(const ClientConfig& config);
  client::HttpClient::Result request(const std::string& method, const std::string& path,
                                     const std::string& body) override;
  std::optional<client::HttpError> stream(const std::string& path,
                                          const client::SseParser::Handler& on_event) override;

 private:
  client::HttpClient client_;
  ClientConfig config_;
};

struct CliEnv {
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::function<std::unique_ptr<Transport>(const ClientConfig&)> connect;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::istream* in = nullptr;  // for "-f -"
  // The process environment, HttpTransport, a real sleep and std::cin.
  static CliEnv system();
};

// Server, token and timeout: flags (--server, --token, --timeout) over the environment
// (PODIUM_SERVER, PODIUM_TOKEN) over the defaults. An invalid URL or timeout is a usage error.
std::variant<ClientConfig, UsageError> resolve_config(const ParsedArgs& args, const CliEnv& env);

// Runs one invocation (args without the program name) and returns the process exit code
// (see exit_codes.h). Output for the user goes to out, errors and notes to err.
int run_cli(const std::vector<std::string>& args, CliEnv& env, std::ostream& out,
            std::ostream& err);

}  // namespace podium::cli
