#include "tests/support/worker_process.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace podium::it {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRegisteredLine = "podium-worker registered as ";

std::string current_account() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? std::string(pw->pw_name) : std::to_string(::geteuid());
}

WorkerOptions with_default_name(WorkerOptions options) {
  if (options.name.empty())
    options.name = "worker-s" + std::to_string(options.slice) + "h" + std::to_string(options.host);
  return options;
}

}  // namespace

std::string find_registered_id(const std::string& log) {
  const std::string rest = text_after(log, kRegisteredLine);
  const auto space = rest.find(' ');
  return space == std::string::npos ? rest : rest.substr(0, space);
}

WorkerProcess::WorkerProcess(WorkerOptions options)
    : options_(with_default_name(std::move(options))),
      process_({.binary = options_.binary,
                .name = options_.name,
                .ready_timeout = options_.ready_timeout,
                .stop_timeout = options_.stop_timeout,
                .dir_prefix = "podium-e2e-"}) {
  if (options_.workdir.empty()) options_.workdir = process_.dir() / "workdir";
}

WorkerProcess::~WorkerProcess() = default;

void WorkerProcess::start() {
  spawn();
  wait_registered();
}

void WorkerProcess::spawn() {
  const fs::path bin = process_.executable();
  std::error_code ec;
  fs::create_directories(options_.workdir, ec);
  worker_id_.clear();

  std::vector<std::string> args = {bin.string(),
                                   "--server",
                                   options_.server_url,
                                   "--token",
                                   options_.token,
                                   "--cluster",
                                   options_.cluster,
                                   "--slice",
                                   std::to_string(options_.slice),
                                   "--host",
                                   std::to_string(options_.host),
                                   "--workdir",
                                   options_.workdir.string(),
                                   "--address",
                                   options_.address,
                                   "--python",
                                   PODIUM_PYTHON};
  // The agent refuses to start as root without being told whom ranks run as: the tests say
  // "as the account running the tests" unless they ask for another one.
  args.push_back("--run-as");
  args.push_back(options_.run_as.empty() ? current_account() : options_.run_as);
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  process_.spawn(args, options_.env);
}

void WorkerProcess::wait_registered() {
  worker_id_ =
      process_.wait_for(find_registered_id, std::string("print \"") + kRegisteredLine + "...\"");
}

int WorkerProcess::terminate() {
  return process_.terminate();
}

int WorkerProcess::kill() {
  return process_.kill();
}

bool WorkerProcess::running() {
  return process_.running();
}

std::string WorkerProcess::log() const {
  return process_.log();
}

std::string WorkerProcess::log_tail(int lines) const {
  return process_.log_tail(lines);
}

fs::path WorkerProcess::rank_log_path(const std::string& attempt_id, int rank) const {
  return options_.workdir / "logs" / attempt_id / ("rank-" + std::to_string(rank) + ".log");
}

std::vector<std::string> WorkerProcess::rank_lines(const std::string& attempt_id, int rank) const {
  std::vector<std::string> out;
  std::ifstream in(rank_log_path(attempt_id, rank), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) {
      out.push_back(text.substr(start));  // a last line without its newline
      break;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace podium::it
