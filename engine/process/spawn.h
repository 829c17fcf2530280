#pragma once
// Starting a program: fork/exec, never a shell (arguments reach the program exactly as given).
// Everything the child needs is prepared before fork: in a multi-threaded parent the child may
// only make async-signal-safe calls until exec. The child's failed setup steps (chdir, exec,
// setuid, ...) come back to the parent through a close-on-exec pipe, so spawn() returns only
// once the program runs or could not be started, and says why.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/process/child.h"

namespace podium::process {

// Another account to start the program as (the parent is root): its supplementary groups, group
// and user are set in the child before chdir and exec.
struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

enum class Group {
  inherit,      // the parent's process group
  own_group,    // a new process group the child leads (setpgid)
  own_session,  // a new session, hence also a new group (setsid): no controlling terminal
};

enum class Stdio {
  inherit,  // the parent's descriptor
  null,     // /dev/null
  pipe,     // a pipe whose other end is the Child's
  file,     // Spec::output_file, appended to (stdout and stderr only)
};

struct Spec {
  // argv[0] without a '/' is searched on the child's PATH (env's; the parent's when env is
  // nullopt), falling back to `default_path` when that environment has no PATH.
  std::vector<std::string> argv;
  std::optional<std::vector<std::string>> env;  // the child's whole environment; nullopt: ours
  std::string default_path = "/usr/local/bin:/usr/bin:/bin";
  std::filesystem::path cwd;  // empty: the parent's
  Group group = Group::own_group;
  Stdio in = Stdio::null;
  Stdio out = Stdio::pipe;
  Stdio err = Stdio::pipe;
  std::filesystem::path output_file;  // for Stdio::file, created with `output_mode`
  mode_t output_mode = 0644;
  std::optional<Account> account;
  // SIGKILL when the thread that started it dies (PR_SET_PDEATHSIG): test binaries use it so a
  // crashed test leaves no server behind.
  bool die_with_parent = false;
};

struct Spawned {
  std::optional<Child> child;  // nullopt when the program could not be started
  std::string error;           // why, e.g. "exec /bin/nope: No such file or directory"
  bool exec_failed = false;    // everything was set up but execve itself failed
};

Spawned spawn(const Spec& spec);

}  // namespace podium::process
