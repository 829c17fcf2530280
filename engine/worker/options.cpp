#include "engine/worker/options.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>

namespace podium::worker {

namespace {

template <typename T>
bool parse_number(const std::string& text, T min, T max, T& out) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return false;
  }
  out = value;
  return true;
}

// The flags that take a value, in the order their values are checked.
constexpr const char* kValueFlags[] = {
    "--server",     "--token",        "--cluster",  "--slice",   "--host",
    "--workdir",    "--address",      "--hostname", "--devices", "--spool-max-bytes",
    "--log-format", "--metadata-url", "--run-as",   "--python"};

// CLI11 reads "--flag=" as a missing value; here it is an empty one, as "--flag ''" is. CLI11
// also wants the tokens last-first.
std::vector<std::string> cli11_tokens(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    const auto flag_with_empty_value = [&a](const char* k) { return a == std::string(k) + "="; };
    // (the attach flags are among the agent's)
    if (std::any_of(std::begin(kValueFlags), std::end(kValueFlags), flag_with_empty_value)) {
      out.push_back(a.substr(0, a.size() - 1));
      out.emplace_back();
    } else {
      out.push_back(a);
    }
  }
  return {out.rbegin(), out.rend()};
}

// The first of CLI11's left-over tokens, in this program's words.
std::string leftover_error(const std::string& token) {
  if (token.rfind("--", 0) == 0) return "unknown flag: " + token.substr(0, token.find('='));
  return "unexpected argument: " + token;
}

// A value-taking flag last, with nothing after it (CLI11 takes the next token as the value
// whatever it looks like, so the flag can only be the last one).
std::string missing_value_error(const std::vector<std::string>& args) {
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->rfind("--", 0) == 0) return it->substr(0, it->find('=')) + " needs a value";
  }
  return "a flag needs a value";
}

// Checks one flag's value and stores it. Returns the error, empty when the value is good.
std::string apply(const std::string& name, const std::string& v, WorkerFlags& f, bool& have_slice,
                  bool& have_host, bool& have_python) {
  if (name == "--server") {
    f.server = v;
  } else if (name == "--token") {
    f.token = v;
  } else if (name == "--cluster") {
    f.cluster = v;
  } else if (name == "--slice") {
    if (!parse_number(v, 0, 1 << 20, f.slice)) return "--slice must be a number >= 0";
    have_slice = true;
  } else if (name == "--host") {
    if (!parse_number(v, 0, 1 << 20, f.host)) return "--host must be a number >= 0";
    have_host = true;
  } else if (name == "--workdir") {
    f.workdir = v;
  } else if (name == "--address") {
    f.address = v;
  } else if (name == "--hostname") {
    f.hostname = v;
  } else if (name == "--devices") {
    if (!parse_number(v, 1, 1 << 16, f.devices)) return "--devices must be a number >= 1";
  } else if (name == "--spool-max-bytes") {
    if (!parse_number<uint64_t>(v, 65536, std::numeric_limits<uint64_t>::max() / 2,
                                f.spool_max_bytes)) {
      return "--spool-max-bytes must be a number >= 65536";
    }
  } else if (name == "--log-format") {
    if (v != "text" && v != "json") return "--log-format must be text or json";
    f.log_format = v;
  } else if (name == "--metadata-url") {
    if (v.empty()) return "--metadata-url must be a URL or none";
    f.metadata_url = v;
  } else if (name == "--run-as") {
    if (v.empty()) return "--run-as needs an account name";
    f.run_as = v;
  } else if (name == "--python") {
    if (v.empty()) return "--python needs an interpreter (or none)";
    f.python = v;
    have_python = true;
  }
  return "";
}

}  // namespace

std::string usage() {
  return "usage: podium-worker --server URL --token TOKEN --cluster NAME --slice I --host J\n"
         "                     [--workdir DIR] [--address ADDR] [--hostname NAME] [--devices N]\n"
         "                     [--spool-max-bytes N] [--log-format text|json]\n"
         "                     [--metadata-url URL|none] [--run-as USER] [--python PATH|none]\n"
         "       podium-worker --version\n"
         "       podium-worker install ...   this host's agent as a systemd unit (install --help)\n"
         "       podium-worker attach ...    one rank under Slurm or Kubernetes (attach --help)\n"
         "\n"
         "  --server URL           podium-server base URL (default: $PODIUM_SERVER)\n"
         "  --token TOKEN          worker token of the cluster (default: $PODIUM_TOKEN)\n"
         "  --cluster NAME         cluster name or id\n"
         "  --slice I, --host J    this host's position in the cluster\n"
         "  --workdir DIR          logs, spool and default process directory\n"
         "                         (default ./podium-worker-<cluster>-<slice>-<host>)\n"
         "  --address ADDR         address other hosts reach this one at\n"
         "                         (default: the first non-loopback IPv4 address)\n"
         "  --hostname NAME        reported host name (default: gethostname)\n"
         "  --devices N            accelerator devices on this host (default 1)\n"
         "  --spool-max-bytes N    bound of unacknowledged log lines on disk (default 268435456)\n"
         "  --log-format FORMAT    text or json (the agent's own log, on stderr; default text)\n"
         "  --metadata-url URL     the host's metadata server, watched for preemption and\n"
         "                         maintenance notices; none turns the watch off (default:\n"
         "                         $PODIUM_METADATA_URL, else\n"
         "                         http://metadata.google.internal/computeMetadata/v1/instance)\n"
         "  --run-as USER          the account ranks run as (default: $PODIUM_RUN_AS); required\n"
         "                         when the agent runs as root (--run-as root to keep root)\n"
         "  --python PATH          the Python whose jax, libtpu and MaxText versions the agent\n"
         "                         reports when it registers; none reports nothing (default:\n"
         "                         $PODIUM_WORKER_PYTHON, else python3)\n";
}

std::string default_address() {
  ifaddrs* list = nullptr;
  std::string found;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
      if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
      sockaddr_in sin{};
      std::memcpy(&sin, a->ifa_addr, sizeof sin);
      char buf[INET_ADDRSTRLEN] = {};
      if (::inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf) == nullptr) continue;
      if (std::string(buf).rfind("127.", 0) == 0) continue;
      found = buf;
      break;
    }
    ::freeifaddrs(list);
  }
  return found.empty() ? "127.0.0.1" : found;
}

std::string default_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

ParsedFlags parse_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  ParsedFlags result;
  WorkerFlags f;
  bool have_slice = false;
  bool have_python = false;
  bool have_host = false;
  const auto fail = [&](std::string message) {
    result.error = std::move(message);
    return result;
  };
  // CLI11 splits the tokens; usage() stays the help text, the messages stay this program's.
  CLI::App app;
  app.set_help_flag();
  app.allow_extras();  // stray words and unknown flags: reported below
  app.add_flag("-h,--help", f.help);
  app.add_flag("--version", f.version);
  std::vector<CLI::Option*> options;
  for (const char* name : kValueFlags) {
    options.push_back(
        app.add_option(name)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll));
  }
  try {
    app.parse(cli11_tokens(args));
  } catch (const CLI::ArgumentMismatch&) {
    return fail(missing_value_error(args));
  } catch (const CLI::ParseError& e) {
    return fail(e.what());
  }
  if (!app.remaining().empty()) return fail(leftover_error(app.remaining().front()));
  for (size_t k = 0; k < options.size(); ++k) {
    // Given more than once: the last one counts, each is checked.
    for (const auto& v : options[k]->results()) {
      const std::string error = apply(kValueFlags[k], v, f, have_slice, have_host, have_python);
      if (!error.empty()) return fail(error);
    }
  }
  if (f.help || f.version) {
    result.flags = f;
    return result;
  }
  if (f.server.empty()) f.server = getenv("PODIUM_SERVER").value_or("");
  if (f.run_as.empty()) f.run_as = getenv("PODIUM_RUN_AS").value_or("");
  if (!have_python)
    if (auto env_python = getenv("PODIUM_WORKER_PYTHON"); env_python && !env_python->empty())
      f.python = *env_python;
  if (f.token.empty()) f.token = getenv("PODIUM_TOKEN").value_or("");
  if (f.metadata_url.empty())
    f.metadata_url = getenv("PODIUM_METADATA_URL")
                         .value_or("http://metadata.google.internal/computeMetadata/v1/instance");
  if (f.server.empty()) return fail("--server (or PODIUM_SERVER) is required");
  if (f.token.empty()) return fail("--token (or PODIUM_TOKEN) is required");
  if (f.cluster.empty()) return fail("--cluster is required");
  if (!have_slice) return fail("--slice is required");
  if (!have_host) return fail("--host is required");
  if (f.workdir.empty()) {
    f.workdir =
        "podium-worker-" + f.cluster + "-" + std::to_string(f.slice) + "-" + std::to_string(f.host);
  }
  std::error_code ec;
  const auto abs = std::filesystem::absolute(f.workdir, ec);
  if (!ec) f.workdir = abs.lexically_normal().string();
  if (f.address.empty()) f.address = default_address();
  if (f.hostname.empty()) f.hostname = default_hostname();
  result.flags = f;
  return result;
}

ParsedAttach parse_attach_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  ParsedAttach result;
  AttachFlags f;
  f.server = getenv("PODIUM_SERVER").value_or("");
  // "--" ends the flags: the rest is the rank's command, whatever it looks like.
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> flags(args.begin(), dashes);
  if (dashes != args.end()) f.command.assign(dashes + 1, args.end());
  CLI::App app;
  app.set_help_flag();
  app.allow_extras();
  app.add_flag("-h,--help", f.help);
  CLI::Option* server = app.add_option("--server");
  CLI::Option* workdir = app.add_option("--workdir");
  CLI::Option* address = app.add_option("--address");
  CLI::Option* log_format = app.add_option("--log-format");
  for (CLI::Option* o : {server, workdir, address, log_format}) {
    o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  try {
    app.parse(cli11_tokens(flags));
  } catch (const CLI::ArgumentMismatch&) {
    // A flag last without its value.
    result.error = "unknown argument '" + flags.back() + "'";
    return result;
  } catch (const CLI::ParseError& e) {
    result.error = e.what();
    return result;
  }
  if (f.help) {
    result.flags = f;
    return result;
  }
  if (!app.remaining().empty()) {
    result.error = "unknown argument '" + app.remaining().front() + "'";
    return result;
  }
  if (server->count() > 0) f.server = server->as<std::string>();
  if (workdir->count() > 0) f.workdir = workdir->as<std::string>();
  f.address = address->count() > 0 ? address->as<std::string>() : default_address();
  if (log_format->count() > 0) f.log_format = log_format->as<std::string>();
  result.flags = f;
  return result;
}

}  // namespace podium::worker
