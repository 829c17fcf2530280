// The real ProcessLauncher: a rank's process through engine/process, in a new session (its own
// process group, so that a signal reaches everything the rank started), stdin /dev/null,
// stdout and stderr piped.

#include "engine/process/spawn.h"
#include "engine/worker/process.h"

namespace podium::worker {

namespace {

class PosixChild final : public ChildProcess {
 public:
  explicit PosixChild(process::Child child) : child_(std::move(child)) {}

  pid_t pid() const override { return child_.pid(); }

  std::optional<ExitStatus> try_wait() override { return child_.try_wait(); }

  bool read_output(std::chrono::milliseconds timeout, std::vector<OutputChunk>& out) override {
    return child_.read_output(timeout, out);
  }

  void signal_group(int sig) override { child_.signal_group(sig); }

  void close_output() override { child_.close_output(); }

 private:
  // Destroyed with the supervisor's handle: a child still running is killed with its group and
  // reaped, never left as a zombie or a running orphan.
  process::Child child_;
};

class PosixLauncher final : public ProcessLauncher {
 public:
  LaunchResult launch(const LaunchSpec& spec) override {
    process::Spec p;
    p.argv = spec.argv;
    p.env = spec.env;
    p.cwd = spec.cwd;
    p.group = process::Group::own_session;
    if (spec.run_as) {
      p.account = process::Account{spec.run_as->name, spec.run_as->uid, spec.run_as->gid,
                                   spec.run_as->groups};
    }
    auto spawned = process::spawn(p);
    LaunchResult result;
    if (!spawned.child) {
      result.error = spawned.error;
      return result;
    }
    result.child = std::make_unique<PosixChild>(std::move(*spawned.child));
    return result;
  }
};

}  // namespace

std::shared_ptr<ProcessLauncher> make_posix_launcher() {
  return std::make_shared<PosixLauncher>();
}

}  // namespace podium::worker
