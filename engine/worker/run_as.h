#pragma once
// The account a host's ranks run as (podium-worker --run-as). Training code is the team's own
// and arbitrary, so it should not run as the agent's own account when that is root: the agent
// keeps its credential (mode 600) and the work directory's spool out of the ranks' reach.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace podium::worker {

struct RunAs {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, as the account's login would have them
  std::string home;
};

struct RunAsResolution {
  std::optional<RunAs> account;  // nullopt with an empty error: the agent's own account
  std::string error;             // why the agent must not start (exit 2)
};

// Decides whom ranks run as, from --run-as (`requested`, "" when absent) and the agent's
// effective uid: an agent running as root needs --run-as (root only when said so); an agent
// that is not root runs ranks as itself and can only be asked for its own account.
RunAsResolution resolve_run_as(const std::string& requested, uid_t effective_uid);

// The account's environment over the agent's: HOME, USER and LOGNAME.
void apply_account_environment(const RunAs& account, std::vector<std::string>& env);

// Makes `root` and everything under it the account's (lchown: links are not followed). Returns
// what failed, empty on success.
std::string give_tree(const std::filesystem::path& root, const RunAs& account);

}  // namespace podium::worker
