#include "engine/process/spawn.h"

#include "engine/process/fd.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/process/program_path.h"

extern char** environ;

namespace podium::process {

using detail::close_fd;

namespace {

// The setup steps a child can fail at, reported to the parent as an index into kSteps.
enum Step { kGroup, kStdin, kStdout, kStderr, kChdir, kExec, kSetgroups, kSetgid, kSetuid };
constexpr const char* kSteps[] = {"setsid", "stdin",     "stdout", "stderr", "chdir",
                                  "exec",   "setgroups", "setgid", "setuid"};

struct ChildFailure {
  int step;
  int err;
};

[[noreturn]] void child_fail(int fd, int step) {
  ChildFailure f{step, errno};
  [[maybe_unused]] ssize_t n = ::write(fd, &f, sizeof f);
  ::_exit(127);
}

void close_inherited_fds(int keep) {
  // The parent's sockets (a listener among them) and other children's pipes must not leak into
  // the program: a leaked listener stays bound after the parent exits, a leaked pipe end keeps
  // another child's output open after that child exited. `keep` is the report pipe (CLOEXEC).
  bool done = true;
  if (keep > 3) done = ::syscall(SYS_close_range, 3U, static_cast<unsigned>(keep - 1), 0U) == 0;
  if (done && ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0) return;
  long max = ::sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

// argv and envp as exec wants them, built before fork (no allocation after it).
struct Prepared {
  std::string program;
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

Prepared prepare(const Spec& spec) {
  Prepared p;
  p.storage = spec.argv;
  if (spec.env) {
    p.storage.insert(p.storage.end(), spec.env->begin(), spec.env->end());
  } else {
    for (char** e = environ; *e != nullptr; ++e) p.storage.emplace_back(*e);
  }
  const std::vector<std::string> env(p.storage.begin() + static_cast<long>(spec.argv.size()),
                                     p.storage.end());
  p.program = find_program(spec.argv[0], path_of(env, spec.default_path));
  for (size_t i = 0; i < p.storage.size(); ++i) {
    (i < spec.argv.size() ? p.argv : p.envp).push_back(p.storage[i].data());
  }
  p.argv.push_back(nullptr);
  p.envp.push_back(nullptr);
  return p;
}

// The descriptors the child's 0, 1 and 2 become, and the parent's ends of its pipes.
struct Plumbing {
  int child_fd[3] = {-1, -1, -1};
  int parent_fd[3] = {-1, -1, -1};
  int null_fd = -1;
  int file_fd = -1;
  int report[2] = {-1, -1};

  void close_child_side() {
    for (int i = 0; i < 3; ++i) {
      if (child_fd[i] != null_fd && child_fd[i] != file_fd) close_fd(child_fd[i]);
      child_fd[i] = -1;
    }
    close_fd(null_fd);
    close_fd(file_fd);
    close_fd(report[1]);
  }
  void close_everything() {
    close_child_side();
    for (int& fd : parent_fd) close_fd(fd);
    close_fd(report[0]);
  }
};

// Opens what the spec's stdio needs. Returns the error, empty on success.
std::string plumb(const Spec& spec, Plumbing& p) {
  const Stdio modes[3] = {spec.in, spec.out, spec.err};
  for (int i = 0; i < 3; ++i) {
    switch (modes[i]) {
      case Stdio::inherit:
        break;
      case Stdio::null:
        if (p.null_fd < 0) p.null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (p.null_fd < 0) return std::string("cannot open /dev/null: ") + std::strerror(errno);
        p.child_fd[i] = p.null_fd;
        break;
      case Stdio::file:
        if (i == 0) return "stdin cannot be a file";
        if (p.file_fd < 0) {
          p.file_fd = ::open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                             spec.output_mode);
        }
        if (p.file_fd < 0) {
          return "cannot open " + spec.output_file.string() + ": " + std::strerror(errno);
        }
        p.child_fd[i] = p.file_fd;
        break;
      case Stdio::pipe: {
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0) {
          return std::string("cannot create pipes: ") + std::strerror(errno);
        }
        p.child_fd[i] = i == 0 ? ends[0] : ends[1];
        p.parent_fd[i] = i == 0 ? ends[1] : ends[0];
        break;
      }
    }
  }
  if (::pipe2(p.report, O_CLOEXEC) != 0) {
    return std::string("cannot create pipes: ") + std::strerror(errno);
  }
  return "";
}

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_program(const Spec& spec, const Prepared& prepared, const Plumbing& p,
                                 pid_t parent, const std::string& cwd) {
  const int w = p.report[1];
  if (spec.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  }
  if (spec.group == Group::own_session && ::setsid() < 0) child_fail(w, kGroup);
  if (spec.group == Group::own_group && ::setpgid(0, 0) != 0) child_fail(w, kGroup);
  // The parent may block or ignore signals (SIGPIPE, SIGTERM in its threads); a program starts
  // with the defaults.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
  for (int i = 0; i < 3; ++i) {
    if (p.child_fd[i] >= 0 && ::dup2(p.child_fd[i], i) < 0) child_fail(w, kStdin + i);
  }
  if (spec.account) {
    // Groups first: once the uid is dropped the process may not change them any more.
    const auto& groups = spec.account->groups;
    if (::setgroups(groups.size(), groups.data()) != 0) child_fail(w, kSetgroups);
    if (::setgid(spec.account->gid) != 0) child_fail(w, kSetgid);
    if (::setuid(spec.account->uid) != 0) child_fail(w, kSetuid);
  }
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) child_fail(w, kChdir);
  close_inherited_fds(w);
  ::execve(prepared.program.c_str(), prepared.argv.data(), prepared.envp.data());
  child_fail(w, kExec);
}

std::string describe_failure(const Spec& spec, const ChildFailure& failure) {
  const std::string what = failure.step == kChdir       ? spec.cwd.string()
                           : failure.step >= kSetgroups ? "to " + spec.account->name
                                                        : spec.argv[0];
  const char* step =
      failure.step == kGroup && spec.group == Group::own_group ? "setpgid" : kSteps[failure.step];
  return std::string(step) + " " + what + ": " + std::strerror(failure.err);
}

}  // namespace

Spawned spawn(const Spec& spec) {
  Spawned result;
  if (spec.argv.empty()) {
    result.error = "the command is empty";
    return result;
  }
  const Prepared prepared = prepare(spec);
  const std::string cwd = spec.cwd.string();
  Plumbing p;
  result.error = plumb(spec, p);
  if (!result.error.empty()) {
    p.close_everything();
    return result;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    p.close_everything();
    return result;
  }
  if (pid == 0) become_program(spec, prepared, p, parent, cwd);
  // Also from this side, so that the group exists before anyone signals it.
  if (spec.group == Group::own_group) ::setpgid(pid, pid);
  p.close_child_side();
  ChildFailure failure{};
  ssize_t n;
  do {
    n = ::read(p.report[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  close_fd(p.report[0]);
  Child child(pid, spec.group != Group::inherit, p.parent_fd[0], p.parent_fd[1], p.parent_fd[2]);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    child.close_stdin();
    child.close_output();
    child.wait();  // it already called _exit
    result.error = describe_failure(spec, failure);
    result.exec_failed = failure.step == kExec;
    return result;
  }
  result.child.emplace(std::move(child));
  return result;
}

}  // namespace podium::process
