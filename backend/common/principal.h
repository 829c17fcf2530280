#pragma once
// Who is calling: a user (admin, member, viewer) or a worker agent bound to one cluster.

#include <optional>
#include <string>

namespace podium::http {

enum class Role { viewer, member, admin };

struct Principal {
  enum class Kind { user, worker } kind = Kind::user;
  std::string user_id;   // users only
  std::string username;  // users only
  Role role = Role::viewer;
  std::string cluster_id;  // workers only: the cluster the token belongs to
  // Attach tokens only (a rank under Slurm or Kubernetes): the one attempt it may act for.
  std::string attempt_id;
  // Per-host credentials only (issued at registration): the worker it is, whose ranks alone it
  // may report, log and checkpoint for. Empty for a cluster's worker token, which may only
  // register.
  std::string worker_id;
  std::string token_id;    // API token or worker token id ("" for session cookies)
  std::string session_id;  // dashboard sessions

  bool is_admin() const { return kind == Kind::user && role == Role::admin; }
  bool can_write() const { return kind == Kind::user && role != Role::viewer; }
  std::string display() const { return kind == Kind::worker ? "worker:" + token_id : username; }
};

std::optional<Role> parse_role(const std::string& s);
const char* role_name(Role r);

}  // namespace podium::http
