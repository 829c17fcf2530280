#include "backend/sched/executors/command_runner.h"

#include <cstdlib>

#include "engine/process/capture.h"
#include "engine/process/spawn.h"

namespace podium::sched {

namespace {

class PosixCommandRunner final : public CommandRunner {
 public:
  CommandResult run(const CommandSpec& spec) override {
    CommandResult result;
    if (spec.argv.empty()) {
      result.err = "no command";
      return result;
    }
    process::Spec p;
    p.argv = spec.argv;
    p.env.emplace();
    for (const auto& [k, v] : spec.env) p.env->push_back(k + "=" + v);
    // Without a PATH of its own the tool is looked up on the server's, as execvp would.
    const char* server_path = std::getenv("PATH");
    p.default_path = server_path ? server_path : "/usr/bin:/bin";
    p.group = process::Group::own_group;
    p.in = process::Stdio::pipe;
    auto spawned = process::spawn(p);
    if (!spawned.child) {
      if (!spawned.exec_failed) {
        result.err = spawned.error;
        return result;
      }
      // As a shell reports it: the tool "ran" and exited 127.
      result.started = true;
      result.exit_code = 127;
      result.err = "cannot execute " + spec.argv[0];
      return result;
    }
    result.started = true;
    const process::Captured captured =
        process::capture(*spawned.child, spec.stdin_text,
                         process::CaptureLimits{spec.timeout, spec.max_output_bytes});
    result.timed_out = captured.timed_out;
    result.exit_code = captured.status.exit_code.value_or(-1);
    result.signal = captured.status.signal.value_or(0);
    result.out = captured.out;
    result.err = captured.err;
    return result;
  }
};

}  // namespace

std::string CommandResult::describe(const std::string& program) const {
  std::string what;
  if (!started)
    what = "could not start: " + err;
  else if (timed_out)
    what = "timed out";
  else if (signal)
    what = "killed by signal " + std::to_string(signal);
  else
    what = "exit " + std::to_string(exit_code);
  std::string detail = err.empty() ? out : err;
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
  if (detail.size() > 500) detail = detail.substr(0, 500) + "...";
  return program + ": " + what + (detail.empty() || !started ? "" : ": " + detail);
}

std::shared_ptr<CommandRunner> make_posix_command_runner() {
  return std::make_shared<PosixCommandRunner>();
}

}  // namespace podium::sched
