#pragma once
// The server-side request forgery guard of webhook targets. A target is refused when its
// address is one a server should not be made to call on a user's behalf: loopback, link-local,
// private (RFC 1918, IPv6 ULA), carrier-grade NAT (RFC 6598), unspecified, multicast/reserved,
// and the cloud metadata servers (169.254.169.254, fd00:ec2::254, metadata.google.internal),
// unless an admin allowed the host in webhooks.allow_hosts. The check runs on every address the
// name resolves to, and the delivery connects only to an address that passed it (no second
// lookup between check and connect: no DNS rebinding gap).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace podium::notify {

// Why an IP address (text, IPv4 or IPv6, IPv4-mapped IPv6 judged as its IPv4) is refused, e.g.
// "loopback", "private (RFC 1918)", "cloud metadata server"; nullopt for a public unicast one.
// Text that is no IP address is refused too ("not an IP address").
std::optional<std::string> forbidden_address_reason(std::string_view ip);

// Host names of metadata servers, refused by name before any lookup.
bool is_metadata_host_name(std::string_view host);

// webhooks.allow_hosts: host names or IP addresses (case-insensitive, exact). An allowed host may
// be called over plain http and may resolve to any address; an allowed IP address is also
// accepted when another name resolves to it.
class AllowList {
 public:
  AllowList() = default;
  explicit AllowList(std::vector<std::string> hosts);
  bool allows_host(std::string_view host) const;
  bool allows_address(std::string_view ip) const;
  const std::vector<std::string>& hosts() const { return hosts_; }

 private:
  std::vector<std::string> hosts_;  // lower-case, without IPv6 brackets
};

}  // namespace podium::notify
