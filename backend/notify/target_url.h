#pragma once
// A webhook's URL, parsed and judged before any network use: http(s) only, no user info, a host,
// a port in range; https unless the host is in webhooks.allow_hosts; never a metadata server's
// name unless allowed. The addresses it resolves to are judged separately (address_guard.h),
// at creation and again at every delivery (webhook_http.h).

#include <optional>
#include <string>
#include <string_view>

#include "backend/notify/address_guard.h"

namespace podium::notify {

inline constexpr size_t kMaxUrlLength = 2048;

struct TargetUrl {
  std::string host;         // without IPv6 brackets, lower-case
  std::string port;         // "443" / "80" when absent
  std::string target;       // path and query, "/" when absent
  std::string host_header;  // host[:port] as written (brackets kept)
  bool tls = false;
};

// nullopt with *error set ("must start with https:// or http://", ...).
std::optional<TargetUrl> parse_target_url(std::string_view url, std::string* error);

// The scheme and name rules for a parsed URL; nullopt when it may be called (subject to the
// address check), else why not.
std::optional<std::string> target_policy_error(const TargetUrl& url, const AllowList& allow);

}  // namespace podium::notify
