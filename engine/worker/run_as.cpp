#include "engine/worker/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace podium::worker {
namespace {

std::optional<RunAs> lookup(const std::string& name, std::string& error) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  int rc = 0;
  // A number names the account by uid, as chown and su accept.
  const bool numeric = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
  if (numeric && name.size() < 10)
    rc = ::getpwuid_r(static_cast<uid_t>(std::stoul(name)), &entry, buffer.data(), buffer.size(),
                      &found);
  else
    rc = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    error = "--run-as " + name + ": " +
            (rc != 0 ? std::string(std::strerror(rc)) : std::string("no such account"));
    return std::nullopt;
  }
  RunAs account;
  account.name = entry.pw_name;
  account.uid = entry.pw_uid;
  account.gid = entry.pw_gid;
  account.home = entry.pw_dir != nullptr ? entry.pw_dir : "/";
  int count = 64;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  if (::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));
    ::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count);
  }
  groups.resize(static_cast<size_t>(count > 0 ? count : 0));
  account.groups = std::move(groups);
  return account;
}

}  // namespace

RunAsResolution resolve_run_as(const std::string& requested, uid_t effective_uid) {
  RunAsResolution out;
  if (requested.empty()) {
    if (effective_uid == 0)
      out.error =
          "podium-worker is running as root: name the account its ranks run as with --run-as "
          "USER (or PODIUM_RUN_AS; --run-as root to run them as root)";
    return out;
  }
  auto account = lookup(requested, out.error);
  if (!account) return out;
  if (effective_uid != 0 && account->uid != effective_uid) {
    out.error = "--run-as " + requested +
                ": only an agent running as root can start ranks as another account";
    return out;
  }
  // Root asked for root, or an account asked for itself: no switch at launch.
  if (account->uid == effective_uid) return out;
  out.account = std::move(account);
  return out;
}

std::string give_tree(const std::filesystem::path& root, const RunAs& account) {
  namespace fs = std::filesystem;
  const auto give = [&](const fs::path& p) -> std::string {
    if (::lchown(p.c_str(), account.uid, account.gid) == 0) return "";
    return "cannot give " + p.string() + " to " + account.name + ": " + std::strerror(errno);
  };
  if (auto e = give(root); !e.empty()) return e;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec))
    if (auto e = give(it->path()); !e.empty()) return e;
  if (ec) return "cannot walk " + root.string() + ": " + ec.message();
  return "";
}

void apply_account_environment(const RunAs& account, std::vector<std::string>& env) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"HOME", account.home},
                                   {"USER", account.name},
                                   {"LOGNAME", account.name}}) {
    const std::string prefix = key + "=";
    bool replaced = false;
    for (auto& e : env)
      if (e.rfind(prefix, 0) == 0) {
        e = prefix + value;
        replaced = true;
      }
    if (!replaced) env.push_back(prefix + value);
  }
}

}  // namespace podium::worker
