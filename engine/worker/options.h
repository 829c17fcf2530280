#pragma once
// podium-worker's command line (docs: ../shared/api.md, "Processes and configuration").

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace podium::worker {

struct WorkerFlags {
  std::string server;  // --server or PODIUM_SERVER
  std::string token;   // --token or PODIUM_TOKEN (never printed)
  std::string cluster;
  int slice = -1;
  int host = -1;
  std::string workdir;  // default ./podium-worker-<cluster>-<slice>-<host>, made absolute
  std::string address;  // default: first non-loopback IPv4, else 127.0.0.1
  std::string hostname;
  int devices = 1;
  uint64_t spool_max_bytes = 268435456;
  std::string log_format = "text";
  // --metadata-url or PODIUM_METADATA_URL: the instance directory of the host's metadata server,
  // watched for preemption notices; "none" turns the watch off. Default: Compute Engine's.
  std::string metadata_url;
  // --run-as or PODIUM_RUN_AS: the account ranks run as (engine/worker/run_as.h).
  std::string run_as;
  // --python or PODIUM_WORKER_PYTHON: the interpreter whose packages the agent reports when it
  // registers (jax, libtpu, maxtext: they pick MaxText's launch form); "none": report nothing.
  std::string python = "python3";
  bool help = false;
  bool version = false;  // --version: print it and exit
};

struct ParsedFlags {
  std::optional<WorkerFlags> flags;
  std::string error;  // when flags is empty: what is wrong, for stderr (exit 2)
};

// `getenv` supplies PODIUM_SERVER / PODIUM_TOKEN when the flags are absent. Fills the defaults.
ParsedFlags parse_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

std::string usage();

// podium-worker attach [--server URL] [--workdir DIR] [--address ADDR] [--log-format F]
// [-- COMMAND...]: one rank under Slurm or Kubernetes.
struct AttachFlags {
  std::string server;   // --server, else PODIUM_SERVER
  std::string workdir;  // "" for the caller's default
  std::string address;  // default: default_address()
  std::string log_format = "text";
  std::vector<std::string> command;  // what follows "--"
  bool help = false;
};

struct ParsedAttach {
  std::optional<AttachFlags> flags;
  std::string error;  // when flags is empty: "unknown argument '...'" (exit 2)
};

ParsedAttach parse_attach_flags(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv);
// The first non-loopback IPv4 address of an interface that is up, else "127.0.0.1".
std::string default_address();
std::string default_hostname();

}  // namespace podium::worker
