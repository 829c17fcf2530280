#include "backend/notify/address_guard.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace podium::notify {

namespace {

std::string guard_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string strip_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return guard_lower(host);
}

std::optional<std::string> ipv4_reason(const std::array<std::uint8_t, 4>& a) {
  const std::uint32_t v = (std::uint32_t{a[0]} << 24) | (std::uint32_t{a[1]} << 16) |
                          (std::uint32_t{a[2]} << 8) | std::uint32_t{a[3]};
  const auto in = [v](std::uint32_t net, int bits) {
    const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
    return (v & mask) == net;
  };
  if (v == 0xA9FEA9FEu) return "cloud metadata server";  // 169.254.169.254
  if (in(0x00000000u, 8)) return "unspecified (0.0.0.0/8)";
  if (in(0x7F000000u, 8)) return "loopback";
  if (in(0x0A000000u, 8) || in(0xAC100000u, 12) || in(0xC0A80000u, 16)) return "private (RFC 1918)";
  if (in(0x64400000u, 10)) return "carrier-grade NAT (RFC 6598)";
  if (in(0xA9FE0000u, 16)) return "link-local";
  if (in(0xC0000000u, 24)) return "IETF protocol assignments (192.0.0.0/24)";
  if (in(0xC6120000u, 15)) return "benchmarking (198.18.0.0/15)";
  if (in(0xE0000000u, 4)) return "multicast";
  if (in(0xF0000000u, 4)) return "reserved (240.0.0.0/4)";
  return std::nullopt;
}

std::optional<std::string> ipv6_reason(const std::array<std::uint8_t, 16>& a) {
  static constexpr std::array<std::uint8_t, 16> kMetadata = {
      0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};
  if (a == kMetadata) return "cloud metadata server";
  const bool zero_first_80 = std::all_of(a.begin(), a.begin() + 10, [](auto b) { return b == 0; });
  if (zero_first_80 && a[10] == 0xff && a[11] == 0xff)  // ::ffff:a.b.c.d
    return ipv4_reason({a[12], a[13], a[14], a[15]});
  const bool zero_first_120 = std::all_of(a.begin(), a.begin() + 15, [](auto b) { return b == 0; });
  if (zero_first_120 && a[15] == 0) return "unspecified (::)";
  if (zero_first_120 && a[15] == 1) return "loopback";
  if (zero_first_80 && a[10] == 0 && a[11] == 0)  // ::a.b.c.d (deprecated IPv4-compatible)
    return "IPv4-compatible IPv6 (::/96)";
  if ((a[0] & 0xfe) == 0xfc) return "private (IPv6 unique local, fc00::/7)";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return "link-local";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return "site-local (fec0::/10)";
  if (a[0] == 0xff) return "multicast";
  // 64:ff9b::/96 (NAT64) reaches IPv4 addresses through a translator: judge the embedded one.
  if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b &&
      std::all_of(a.begin() + 4, a.begin() + 12, [](auto b) { return b == 0; }))
    return ipv4_reason({a[12], a[13], a[14], a[15]});
  return std::nullopt;
}

}  // namespace

std::optional<std::string> forbidden_address_reason(std::string_view ip_text) {
  const std::string ip = strip_brackets(ip_text);
  // A scope id ("fe80::1%eth0") is link-local by definition; inet_pton refuses it anyway.
  std::array<std::uint8_t, 4> v4{};
  if (inet_pton(AF_INET, ip.c_str(), v4.data()) == 1) return ipv4_reason(v4);
  std::array<std::uint8_t, 16> v6{};
  if (inet_pton(AF_INET6, ip.c_str(), v6.data()) == 1) return ipv6_reason(v6);
  return "not an IP address";
}

bool is_metadata_host_name(std::string_view host) {
  std::string h = strip_brackets(host);
  while (!h.empty() && h.back() == '.') h.pop_back();  // "metadata.google.internal."
  return h == "metadata.google.internal" || h == "metadata";
}

AllowList::AllowList(std::vector<std::string> hosts) {
  for (auto& h : hosts) {
    std::string s = strip_brackets(h);
    if (!s.empty()) hosts_.push_back(std::move(s));
  }
}

bool AllowList::allows_host(std::string_view host) const {
  const std::string h = strip_brackets(host);
  return std::find(hosts_.begin(), hosts_.end(), h) != hosts_.end();
}

bool AllowList::allows_address(std::string_view ip) const {
  // Compare parsed forms so that "::1" and "0:0::1" are the same address.
  const std::string want = strip_brackets(ip);
  std::array<std::uint8_t, 16> a{};
  const int family = want.find(':') == std::string::npos ? AF_INET : AF_INET6;
  if (inet_pton(family, want.c_str(), a.data()) != 1) return false;
  for (const auto& h : hosts_) {
    std::array<std::uint8_t, 16> b{};
    if (inet_pton(family, h.c_str(), b.data()) == 1 &&
        std::memcmp(a.data(), b.data(), family == AF_INET ? 4 : 16) == 0)
      return true;
  }
  return false;
}

}  // namespace podium::notify
