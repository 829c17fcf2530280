#pragma once
// A started process that this process owns: its pid, the parent's ends of its pipes, and its
// exit status once reaped. Destroying a Child that was not reaped kills it (its whole process
// group when it leads one) and reaps it: nothing leaves a zombie or a running orphan behind.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace podium::process {

struct ExitStatus {
  std::optional<int> exit_code;  // exited normally
  std::optional<int> signal;     // killed by a signal
  // A shell's $?: the exit code, or 128 + the signal.
  int shell_code() const;
};

enum class Stream { out, err };

struct OutputChunk {
  Stream stream;
  std::string bytes;
};

class Child {
 public:
  // Takes ownership of `pid` and of the pipe ends (-1 where there is none).
  Child(pid_t pid, bool leads_group, int in_fd, int out_fd, int err_fd);
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }

  // Non-blocking: the exit status once the process ended (and is reaped), else nullopt.
  std::optional<ExitStatus> try_wait();
  // Waits up to `timeout` for the exit; nullopt while it still runs.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  ExitStatus wait();

  // Sends `sig` to the process (nothing once it is reaped: the pid may be reused).
  void signal(int sig) const;
  // Sends `sig` to the process group it leads (it and everything it started; the group may
  // outlive its leader) and to the process itself.
  void signal_group(int sig) const;

  // The parent's pipe ends, -1 when the stream is not a pipe or was closed.
  int stdin_fd() const { return fds_[0]; }
  int stdout_fd() const { return fds_[1]; }
  int stderr_fd() const { return fds_[2]; }
  void close_stdin();
  // Waits up to `timeout` for output on the stdout/stderr pipes and appends one read of each
  // ready one. Returns false once both reached end of file (nothing more will ever come).
  bool read_output(std::chrono::milliseconds timeout, std::vector<OutputChunk>& out);
  // Stops reading: closes the output pipes (descendants may keep them open after the exit).
  void close_output();

  // Gives up ownership: the process is neither killed nor reaped by this object any more.
  pid_t release();

 private:
  void close_all();

  pid_t pid_ = -1;
  bool leads_group_ = false;
  bool reaped_ = false;
  ExitStatus status_;
  int fds_[3] = {-1, -1, -1};
};

}  // namespace podium::process
