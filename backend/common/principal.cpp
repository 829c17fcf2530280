#include "backend/common/principal.h"

namespace podium::http {

std::optional<Role> parse_role(const std::string& s) {
  if (s == "admin") return Role::admin;
  if (s == "member") return Role::member;
  if (s == "viewer") return Role::viewer;
  return std::nullopt;
}

const char* role_name(Role r) {
  switch (r) {
    case Role::admin:
      return "admin";
    case Role::member:
      return "member";
    case Role::viewer:
      return "viewer";
  }
  return "viewer";
}

}  // namespace podium::http
