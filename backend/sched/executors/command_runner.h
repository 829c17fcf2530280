#pragma once
// Runs an engine's command-line tool (sbatch, scontrol, kubectl) and captures what it printed.
// Every run has a deadline and an output limit: an engine that hangs or floods cannot stall
// the dispatcher.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace podium::sched {

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on env's PATH
  // The child's whole environment: nothing of the server's own (its database URL, tokens) is
  // passed unless listed here.
  std::map<std::string, std::string> env;
  std::string stdin_text;
  std::chrono::milliseconds timeout{30000};
  size_t max_output_bytes = 4 * 1024 * 1024;
};

struct CommandResult {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;
  int signal = 0;
  std::string out;
  std::string err;
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // "sbatch: exit 1: sbatch: error: Batch job submission failed: ..." for messages.
  std::string describe(const std::string& program) const;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult run(const CommandSpec& spec) = 0;
};

// engine/process with pipes; the child gets its own process group, killed at the deadline.
std::shared_ptr<CommandRunner> make_posix_command_runner();

}  // namespace podium::sched
