#include "engine/worker/install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/client/http_client.h"
#include "engine/process/spawn.h"

extern char** environ;

namespace podium::worker {

namespace {

namespace fs = std::filesystem;

constexpr const char* kBinary = "usr/local/bin/podium-worker";
constexpr const char* kEnvFile = "etc/podium/worker.env";
constexpr const char* kUnitFile = "etc/systemd/system/podium-worker.service";
constexpr const char* kUnitName = "podium-worker.service";

bool parse_index(const std::string& text, int& out) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 1000000)
    return false;
  out = value;
  return true;
}

// What may stand unquoted in the environment file and in ExecStart's $PODIUM_WORKER_ARGS:
// systemd splits that variable at whitespace and reads quotes and backslashes itself.
bool plain_word(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// A value systemd's EnvironmentFile reads back unchanged inside double quotes: no quote,
// backslash, '$' or control character.
bool env_file_safe(const std::string& s) {
  for (char c : s)
    if (c == '"' || c == '\\' || c == '$' || c == '`' || static_cast<unsigned char>(c) < 0x20 ||
        c == 0x7f)
      return false;
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

// Writes `text` to `path` with `mode`, through a temporary file renamed into place, so a reader
// never sees half a file and the file never exists with a wider mode.
std::string write_file(const fs::path& path, const std::string& text, mode_t mode) {
  const fs::path tmp = path.string() + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return "cannot create " + tmp.string() + ": " + std::strerror(errno);
  ::fchmod(fd, mode);  // the umask may have narrowed it; never widens beyond `mode`
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return "cannot write " + tmp.string() + ": " + why;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return "cannot write " + tmp.string() + ": " + std::strerror(errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot rename " + tmp.string() + " to " + path.string() + ": " + why;
  }
  return "";
}

std::string make_dir(const fs::path& dir, mode_t mode) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir.string() + ": " + ec.message();
  if (::chmod(dir.c_str(), mode) != 0)
    return "cannot chmod " + dir.string() + ": " + std::strerror(errno);
  return "";
}

}  // namespace

std::string install_usage() {
  return "usage: podium-worker install --server URL --cluster NAME --slice I --host J\n"
         "                             --run-as USER (--token-file FILE | --token-stdin)\n"
         "                             [--ca-file FILE] [--root DIR] [--no-enable]\n"
         "                             [--binary PATH]\n"
         "\n"
         "Installs this host's agent as the systemd unit podium-worker.service and starts it.\n"
         "  --server URL       podium-server as this host reaches it (default: $PODIUM_SERVER)\n"
         "  --token-file FILE  the cluster's worker token (podium clusters worker-token NAME);\n"
         "                     --token-stdin reads it from standard input; default:\n"
         "                     $PODIUM_TOKEN. It goes to /etc/podium/worker.env (mode 600), never\n"
         "                     to a command line\n"
         "  --cluster, --slice, --host   this host's place in the cluster\n"
         "  --run-as USER      the account ranks run as (default: $PODIUM_RUN_AS; root written\n"
         "                     out to keep root)\n"
         "  --ca-file FILE     CA bundle of the server's certificate (default: $PODIUM_CA_FILE)\n"
         "  --root DIR         install under DIR instead of / (an image, a test): systemctl only\n"
         "                     links the unit there\n"
         "  --no-enable        write the files, run no systemctl\n"
         "  --binary PATH      the podium-worker to install (default: this one)\n";
}

ParsedInstall parse_install_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv,
    const std::function<std::optional<std::string>(const std::string&)>& read_text) {
  ParsedInstall out;
  InstallOptions o;
  std::optional<std::string> token_source;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      const std::string n(name);
      if (a == n) {
        if (i + 1 >= args.size()) return std::string("\x01missing");
        return args[++i];
      }
      if (a.rfind(n + "=", 0) == 0) return a.substr(n.size() + 1);
      return std::nullopt;
    };
    auto missing = [](const std::optional<std::string>& v) { return v && *v == "\x01missing"; };
    std::optional<std::string> v;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--no-enable") {
      o.enable = false;
    } else if (a == "--token-stdin") {
      token_source = "-";
    } else if (a == "--token" || a.rfind("--token=", 0) == 0) {
      out.error =
          "--token would put the token on a command line (visible in ps and shell "
          "history): use --token-file FILE, --token-stdin or PODIUM_TOKEN";
      return out;
    } else if ((v = value("--server"))) {
      o.server = *v;
    } else if ((v = value("--token-file"))) {
      token_source = *v;
    } else if ((v = value("--cluster"))) {
      o.cluster = *v;
    } else if ((v = value("--slice"))) {
      if (missing(v) || !parse_index(*v, o.slice)) {
        out.error = "--slice must be a whole number from 0";
        return out;
      }
      continue;
    } else if ((v = value("--host"))) {
      if (missing(v) || !parse_index(*v, o.host)) {
        out.error = "--host must be a whole number from 0";
        return out;
      }
      continue;
    } else if ((v = value("--run-as"))) {
      o.run_as = *v;
    } else if ((v = value("--ca-file"))) {
      o.ca_file = *v;
    } else if ((v = value("--root"))) {
      o.root = *v;
    } else if ((v = value("--binary"))) {
      o.binary = *v;
    } else {
      out.error = "unknown argument '" + a + "'";
      return out;
    }
    if (missing(v)) {
      out.error = a + " needs a value";
      return out;
    }
  }
  if (o.help) {
    out.options = o;
    return out;
  }
  if (o.server.empty()) o.server = getenv("PODIUM_SERVER").value_or("");
  if (o.run_as.empty()) o.run_as = getenv("PODIUM_RUN_AS").value_or("");
  if (o.ca_file.empty()) o.ca_file = getenv("PODIUM_CA_FILE").value_or("");
  if (token_source) {
    auto text = read_text(*token_source);
    if (!text) {
      out.error = "cannot read the token from " +
                  (*token_source == "-" ? std::string("standard input") : *token_source);
      return out;
    }
    o.token = trim(*text);
  } else {
    o.token = getenv("PODIUM_TOKEN").value_or("");
  }

  std::string url_error;
  if (o.server.empty()) {
    out.error = "--server (or PODIUM_SERVER) is required";
  } else if (!client::parse_base_url(o.server, &url_error)) {
    out.error = "--server: " + url_error;
  } else if (!env_file_safe(o.server)) {
    out.error = "--server has characters an environment file cannot hold";
  } else if (o.token.empty()) {
    out.error = "no token: --token-file FILE, --token-stdin or PODIUM_TOKEN";
  } else if (!plain_word(o.token, 512)) {
    out.error = "the token is not a Podium worker token (letters, digits, '_', '-')";
  } else if (!plain_word(o.cluster, 128)) {
    out.error = "--cluster is required: the cluster's name (letters, digits, '.', '_', '-')";
  } else if (o.slice < 0 || o.host < 0) {
    out.error = "--slice and --host are required";
  } else if (!plain_word(o.run_as, 32)) {
    out.error =
        "--run-as (or PODIUM_RUN_AS) is required: the account ranks run as (a root "
        "agent refuses to start without one; root written out keeps root)";
  } else if (!o.ca_file.empty() && (o.ca_file.front() != '/' || !env_file_safe(o.ca_file))) {
    out.error = "--ca-file must be an absolute path";
  } else if (o.root.empty() || o.root.front() != '/') {
    out.error = "--root must be an absolute directory";
  } else {
    out.options = o;
  }
  return out;
}

std::string worker_unit_text() {
  // As deploy/systemd/podium-worker.service, which explains each setting.
  return std::string(
             "# Written by podium-worker install. The token and the host's place in the cluster\n"
             "# are in /etc/podium/worker.env (root only); re-run install to change them.\n"
             "[Unit]\n"
             "Description=Podium worker agent (runs this host's rank of each attempt)\n"
             "After=network-online.target\n"
             "Wants=network-online.target\n"
             "\n"
             "[Service]\n"
             "Type=simple\n"
             "EnvironmentFile=/") +
         kEnvFile +
         "\n"
         "ExecStart=/" +
         kBinary +
         " $PODIUM_WORKER_ARGS --workdir /var/lib/podium-worker\n"
         "KillMode=mixed\n"
         "KillSignal=SIGTERM\n"
         "TimeoutStopSec=90\n"
         "Restart=always\n"
         "RestartSec=2\n"
         "StateDirectory=podium-worker\n"
         "\n"
         "[Install]\n"
         "WantedBy=multi-user.target\n";
}

std::string worker_env_text(const InstallOptions& o) {
  std::string out =
      "# podium-worker install: this host's agent. Root only (mode 600): it holds the token.\n";
  out += "PODIUM_SERVER=\"" + o.server + "\"\n";
  out += "PODIUM_TOKEN=" + o.token + "\n";
  out += "PODIUM_WORKER_ARGS=\"--cluster " + o.cluster + " --slice " + std::to_string(o.slice) +
         " --host " + std::to_string(o.host) + "\"\n";
  out += "PODIUM_RUN_AS=" + o.run_as + "\n";
  if (!o.ca_file.empty()) out += "PODIUM_CA_FILE=\"" + o.ca_file + "\"\n";
  return out;
}

std::vector<std::vector<std::string>> enable_commands(const InstallOptions& o) {
  if (!o.enable) return {};
  if (fs::path(o.root) != fs::path("/"))
    return {{"systemctl", "--root=" + o.root, "enable", kUnitName}};
  return {{"systemctl", "daemon-reload"}, {"systemctl", "enable", "--now", kUnitName}};
}

std::string install_worker(const InstallOptions& o, const CommandRun& run) {
  const fs::path root(o.root);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return "--root " + o.root + " is not a directory";
  if (root == fs::path("/") && ::geteuid() != 0)
    return "install writes /etc and /usr/local/bin: run it as root (or with --root DIR)";

  // The binary first: a unit must never point at a missing program.
  std::string source = o.binary;
  if (source.empty()) {
    source = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) return "cannot find this executable: " + ec.message();
  }
  const fs::path binary = root / kBinary;
  if (auto e = make_dir(binary.parent_path(), 0755); !e.empty()) return e;
  if (!fs::exists(binary, ec) || !fs::equivalent(source, binary, ec)) {
    const fs::path tmp = binary.string() + ".tmp";
    fs::remove(tmp, ec);
    fs::copy_file(source, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) return "cannot copy " + source + " to " + tmp.string() + ": " + ec.message();
    if (::chmod(tmp.c_str(), 0755) != 0 || ::rename(tmp.c_str(), binary.c_str()) != 0)
      return "cannot install " + binary.string() + ": " + std::strerror(errno);
  }

  const fs::path env_file = root / kEnvFile;
  if (auto e = make_dir(env_file.parent_path(), 0700); !e.empty()) return e;
  if (auto e = write_file(env_file, worker_env_text(o), 0600); !e.empty()) return e;
  const fs::path unit = root / kUnitFile;
  if (auto e = make_dir(unit.parent_path(), 0755); !e.empty()) return e;
  if (auto e = write_file(unit, worker_unit_text(), 0644); !e.empty()) return e;

  for (const auto& argv : enable_commands(o)) {
    const int status = run(argv);
    if (status != 0) {
      std::string line;
      for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
      return line + " failed (exit status " + std::to_string(status) + ")";
    }
  }
  return "";
}

int run_command(const std::vector<std::string>& argv) {
  // systemctl with the installer's own environment and terminal, in its process group.
  process::Spec spec;
  spec.argv = argv;
  spec.group = process::Group::inherit;
  spec.in = spec.out = spec.err = process::Stdio::inherit;
  auto spawned = process::spawn(spec);
  if (!spawned.child) return spawned.exec_failed ? 127 : -1;
  return spawned.child->wait().exit_code.value_or(-1);
}

}  // namespace podium::worker

namespace podium::worker {

int run_install_command(const std::vector<std::string>& args) {
  const auto parsed = parse_install_flags(
      args,
      [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
      },
      [](const std::string& path) -> std::optional<std::string> {
        std::ifstream in(path == "-" ? "/dev/stdin" : path);
        if (!in) return std::nullopt;
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return text;
      });
  if (!parsed.options) {
    std::cerr << "podium-worker install: " << parsed.error << "\n" << install_usage();
    return 2;
  }
  if (parsed.options->help) {
    std::cout << install_usage();
    return 0;
  }
  const std::string error = install_worker(*parsed.options, run_command);
  if (!error.empty()) {
    std::cerr << "podium-worker install: " << error << "\n";
    return 1;
  }
  std::cout << "podium-worker install: " << kUnitName
            << (parsed.options->enable ? " installed and enabled" : " installed (not enabled)")
            << " under " << parsed.options->root << "\n";
  return 0;
}

}  // namespace podium::worker
