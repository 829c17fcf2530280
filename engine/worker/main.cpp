// podium-worker: the agent on every host (docs/agent-protocol.md). Flags, signals and the one
// line on stdout live here; the agent itself is in agent.cpp.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "engine/client/http_client.h"
#include "engine/core/launch/attach_identity.h"
#include "engine/worker/agent.h"
#include "engine/worker/attach.h"
#include "engine/worker/environment.h"
#include "engine/worker/install.h"
#include "engine/worker/logging.h"
#include "engine/worker/options.h"
#include "engine/worker/software_probe.h"

namespace {

using namespace podium::worker;

std::optional<std::string> env_value(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

const char* kAttachHelp =
    "usage: podium-worker attach [--server URL] [--workdir DIR] [--address ADDR]\n"
    "                            [--log-format text|json] [-- COMMAND...]\n"
    "\n"
    "The entrypoint of one rank under Slurm or Kubernetes (docs/executors.md). The rank's place\n"
    "comes from the engine's environment (SLURM_PROCID, JOB_COMPLETION_INDEX, ...), the token\n"
    "from PODIUM_ATTACH_TOKEN, the server from --server or PODIUM_SERVER. A COMMAND after --\n"
    "replaces the rank's command (its environment still comes from Podium).\n";

// podium-worker attach: one rank, then exit with its status.
int run_attach_command(const std::vector<std::string>& args, const sigset_t& signals) {
  const ParsedAttach parsed = parse_attach_flags(args, env_value);
  if (!parsed.flags) {
    std::cerr << "podium-worker attach: " << parsed.error << "\n" << kAttachHelp;
    return 2;
  }
  if (parsed.flags->help) {
    std::cout << kAttachHelp;
    return 0;
  }
  const std::string& server = parsed.flags->server;
  const std::string& workdir = parsed.flags->workdir;
  configure_logging(parsed.flags->log_format);
  std::string url_error;
  if (server.empty() || !podium::client::parse_base_url(server, &url_error)) {
    std::cerr << "podium-worker attach: --server/PODIUM_SERVER: "
              << (server.empty() ? "required" : url_error) << "\n";
    return 2;
  }
  const auto token = env_value("PODIUM_ATTACH_TOKEN");
  if (!token || token->empty()) {
    std::cerr << "podium-worker attach: PODIUM_ATTACH_TOKEN is not set (Podium puts it in the "
                 "job's environment at submission)\n";
    return 2;
  }
  const auto identity = podium::core::identify_rank(env_value);
  if (!identity.identity) {
    std::cerr << "podium-worker attach: " << identity.error << "\n";
    return 2;
  }
  const auto& id = *identity.identity;
  AttachOptions options;
  const std::string attempt = env_value("PODIUM_ATTEMPT_ID").value_or("attempt");
  options.workdir = workdir.empty()
                        ? std::filesystem::temp_directory_path() /
                              ("podium-attach-" + attempt + "-" + std::to_string(id.rank))
                        : std::filesystem::path(workdir);
  options.address = parsed.flags->address;
  options.hostname = default_hostname();
  options.command = parsed.flags->command;
  options.echo = [](const std::string& line) { std::cout << line << '\n' << std::flush; };
  options.probe_python = env_value("PODIUM_WORKER_PYTHON").value_or("python3");
  options.code_bundle = env_value("PODIUM_CODE_BUNDLE").value_or("");
  log().info("podium-worker attach {}: {} rank {} of {} (slice {}, host {}), server {}",
             podium::client::client_version(), id.engine, id.rank, id.world, id.slice, id.host,
             server);
  std::atomic<bool> stop{false};
  std::thread signal_thread([&stop, signals] {
    int sig = 0;
    while (sigwait(&signals, &sig) == 0) {
      log().info("received {}; stopping the rank", strsignal(sig));
      stop = true;
    }
  });
  signal_thread.detach();
  const int code = run_attach(id, options, make_http_control_plane(server, *token),
                              make_posix_launcher(), std::make_shared<SteadyClock>(), stop);
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

int run(int argc, char** argv) {
  // Signals are taken by one thread with sigwait; every other thread (and, until exec, every
  // child) inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  // A shell starts background jobs with SIGINT ignored, and an ignored signal never reaches
  // sigwait: take the defaults back (blocked, they cannot kill the process).
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);

  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "install")
    return run_install_command(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args.front() == "attach")
    return run_attach_command(std::vector<std::string>(args.begin() + 1, args.end()), signals);
  const ParsedFlags parsed = parse_flags(args, [](const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
  });
  if (!parsed.flags) {
    std::cerr << "podium-worker: " << parsed.error << "\n(see podium-worker --help)\n";
    return 2;
  }
  const WorkerFlags& f = *parsed.flags;
  if (f.help) {
    std::cout << usage() << std::flush;
    return 0;
  }
  if (f.version) {
    std::cout << "podium-worker " << podium::client::client_version() << std::endl;
    return 0;
  }
  std::string url_error;
  if (!podium::client::parse_base_url(f.server, &url_error)) {
    std::cerr << "podium-worker: --server: " << url_error << "\n";
    return 2;
  }
  const RunAsResolution run_as = resolve_run_as(f.run_as, ::geteuid());
  if (!run_as.error.empty()) {
    std::cerr << "podium-worker: " << run_as.error << "\n";
    return 2;
  }
  configure_logging(f.log_format);

  AgentOptions options;
  options.run_as = run_as.account;
  options.cluster = f.cluster;
  options.slice = f.slice;
  options.host = f.host;
  options.workdir = f.workdir;
  options.address = f.address;
  options.hostname = f.hostname;
  options.devices = f.devices;
  options.spool_max_bytes = f.spool_max_bytes;
  options.announce = [](const std::string& line) { std::cout << line << std::endl; };
  if (f.metadata_url != "none") {
    std::string metadata_error;
    if (!podium::client::parse_base_url(f.metadata_url, &metadata_error)) {
      std::cerr << "podium-worker: --metadata-url: " << metadata_error << "\n";
      return 2;
    }
    options.metadata = make_gce_metadata_source(f.metadata_url);
  }

  auto launcher = make_posix_launcher();
  if (f.python != "none") {
    options.probe_python = f.python;
    std::string probe_error;
    std::error_code ec;
    std::filesystem::create_directories(f.workdir, ec);
    options.software = probe_software(*launcher, f.python, current_environment(), f.workdir,
                                      std::chrono::seconds(30), &probe_error);
    if (options.software.is_null())
      log().warn("no software report ({}): MaxText runs launch by the cluster's declaration",
                 probe_error);
    else
      log().info("software: {}", options.software.dump());
  }
  log().info(
      "podium-worker {} starting: server {}, cluster {} slice {} host {}, workdir {}, "
      "address {}, ranks as {}",
      podium::client::client_version(), f.server, f.cluster, f.slice, f.host, f.workdir, f.address,
      run_as.account ? run_as.account->name : "the agent's own account");
  Agent agent(options, make_http_control_plane(f.server, f.token), launcher,
              std::make_shared<SteadyClock>());
  std::thread signal_thread([&agent, signals] {
    int sig = 0;
    bool first = true;
    while (sigwait(&signals, &sig) == 0) {
      if (first) {
        log().info("received {}; stopping the processes and flushing", strsignal(sig));
        agent.stop();
        first = false;
      } else {
        log().info("received {} again; still stopping", strsignal(sig));
      }
    }
  });
  signal_thread.detach();
  const int code = agent.run();
  log().info("podium-worker stopped");
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  // Without destructors: the long poll may still wait on the server, and nothing is left to save.
  std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  const int code = run(argc, argv);
  std::cout.flush();
  return code;
}
