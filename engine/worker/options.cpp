#include "engine/worker/options.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

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

}  // namespace

std::string usage() {
  return "usage: podium-worker --server URL --token TOKEN --cluster NAME --slice I --host J\n"
         "                     [--workdir DIR] [--address ADDR] [--hostname NAME] [--devices N]\n"
         "                     [--spool-max-bytes N] [--log-format text|json]\n"
         "                     [--metadata-url URL|none] [--run-as USER] [--python PATH|none]\n"
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
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (name == "--help" || name == "-h") {
      f.help = true;
      continue;
    }
    if (name.rfind("--", 0) != 0) return fail("unexpected argument: " + name);
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    static const char* const kKnown[] = {
        "--server",     "--token",        "--cluster",  "--slice",   "--host",
        "--workdir",    "--address",      "--hostname", "--devices", "--spool-max-bytes",
        "--log-format", "--metadata-url", "--run-as",   "--python"};
    bool known = false;
    for (const char* k : kKnown) known = known || name == k;
    if (!known) return fail("unknown flag: " + name);
    if (!value) {
      if (i + 1 >= args.size()) return fail(name + " needs a value");
      value = args[++i];
    }
    const std::string& v = *value;
    if (name == "--server") {
      f.server = v;
    } else if (name == "--token") {
      f.token = v;
    } else if (name == "--cluster") {
      f.cluster = v;
    } else if (name == "--slice") {
      if (!parse_number(v, 0, 1 << 20, f.slice)) return fail("--slice must be a number >= 0");
      have_slice = true;
    } else if (name == "--host") {
      if (!parse_number(v, 0, 1 << 20, f.host)) return fail("--host must be a number >= 0");
      have_host = true;
    } else if (name == "--workdir") {
      f.workdir = v;
    } else if (name == "--address") {
      f.address = v;
    } else if (name == "--hostname") {
      f.hostname = v;
    } else if (name == "--devices") {
      if (!parse_number(v, 1, 1 << 16, f.devices)) return fail("--devices must be a number >= 1");
    } else if (name == "--spool-max-bytes") {
      if (!parse_number<uint64_t>(v, 65536, std::numeric_limits<uint64_t>::max() / 2,
                                  f.spool_max_bytes)) {
        return fail("--spool-max-bytes must be a number >= 65536");
      }
    } else if (name == "--log-format") {
      if (v != "text" && v != "json") return fail("--log-format must be text or json");
      f.log_format = v;
    } else if (name == "--metadata-url") {
      if (v.empty()) return fail("--metadata-url must be a URL or none");
      f.metadata_url = v;
    } else if (name == "--run-as") {
      if (v.empty()) return fail("--run-as needs an account name");
      f.run_as = v;
    } else if (name == "--python") {
      if (v.empty()) return fail("--python needs an interpreter (or none)");
      f.python = v;
      have_python = true;
    }
  }
  if (f.help) {
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

}  // namespace podium::worker
