#pragma once
// `podium-worker install`: makes this host an agent that starts at boot (docs/operations.md,
// "Hosts that onboard themselves"). It copies the running binary to
// <root>/usr/local/bin/podium-worker, writes the credentials and the host's place in the cluster
// to <root>/etc/podium/worker.env (root only, mode 600: the token never appears on a command
// line, in the unit or in `ps`), writes <root>/etc/systemd/system/podium-worker.service, and
// enables and starts it (`systemctl daemon-reload`, `systemctl enable --now`). With --root DIR
// everything lands under DIR and systemctl only links the unit there (`systemctl --root=DIR
// enable`, no daemon is asked); --no-enable skips systemctl altogether (tests, image builds).

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace podium::worker {

struct InstallOptions {
  std::string server;      // --server or PODIUM_SERVER
  std::string token;       // --token-file FILE, --token-stdin, or PODIUM_TOKEN; never a flag value
  std::string cluster;     // --cluster
  int slice = -1;          // --slice
  int host = -1;           // --host
  std::string run_as;      // --run-as or PODIUM_RUN_AS: the account ranks run as (required)
  std::string ca_file;     // --ca-file or PODIUM_CA_FILE: a private CA of the server's certificate
  std::string root = "/";  // --root DIR
  bool enable = true;      // --no-enable: false
  std::string binary;      // --binary PATH: what to copy (default: this executable)
  bool help = false;
};

struct ParsedInstall {
  std::optional<InstallOptions> options;
  std::string error;  // when options is empty: what is wrong (exit 2)
};

// `getenv` supplies PODIUM_SERVER, PODIUM_TOKEN, PODIUM_RUN_AS, PODIUM_CA_FILE; `read_text`
// reads --token-file (and "-" for --token-stdin), nullopt when it cannot.
ParsedInstall parse_install_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv,
    const std::function<std::optional<std::string>(const std::string&)>& read_text);

std::string install_usage();

// The unit file and the environment file install writes.
std::string worker_unit_text();
std::string worker_env_text(const InstallOptions& o);

// A command install runs (systemctl): argv, exit status (-1: could not start).
using CommandRun = std::function<int(const std::vector<std::string>&)>;
// The systemctl commands that enable the unit for `o` (empty with --no-enable).
std::vector<std::vector<std::string>> enable_commands(const InstallOptions& o);

// Performs the install; "" on success, else what failed. `run` runs systemctl.
std::string install_worker(const InstallOptions& o, const CommandRun& run);

// `podium-worker install ARGS`: the exit status (0, 1 failed, 2 bad arguments).
int run_install_command(const std::vector<std::string>& args);

// fork/exec of argv with the environment of this process, waiting for it.
int run_command(const std::vector<std::string>& argv);

}  // namespace podium::worker
