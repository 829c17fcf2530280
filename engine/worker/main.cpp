// podium-worker: the agent on every host (docs/agent-protocol.md). Flags, signals and the one
// line on stdout live here; the agent itself is in agent.cpp.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "engine/client/http_client.h"
#include "engine/worker/agent.h"
#include "engine/worker/logging.h"
#include "engine/worker/options.h"

namespace {

using namespace podium::worker;

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
  std::string url_error;
  if (!podium::client::parse_base_url(f.server, &url_error)) {
    std::cerr << "podium-worker: --server: " << url_error << "\n";
    return 2;
  }
  configure_logging(f.log_format);

  AgentOptions options;
  options.cluster = f.cluster;
  options.slice = f.slice;
  options.host = f.host;
  options.workdir = f.workdir;
  options.address = f.address;
  options.hostname = f.hostname;
  options.devices = f.devices;
  options.spool_max_bytes = f.spool_max_bytes;
  options.announce = [](const std::string& line) { std::cout << line << std::endl; };

  log().info(
      "podium-worker {} starting: server {}, cluster {} slice {} host {}, workdir {}, "
      "address {}",
      podium::client::client_version(), f.server, f.cluster, f.slice, f.host, f.workdir, f.address);
  Agent agent(options, make_http_control_plane(f.server, f.token), make_posix_launcher(),
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
