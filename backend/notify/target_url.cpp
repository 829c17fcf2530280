#include "backend/notify/target_url.h"

#include <cctype>
#include <charconv>

namespace podium::notify {

namespace {

std::string url_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool valid_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::optional<TargetUrl> parse_target_url(std::string_view url, std::string* error) {
  const auto fail = [&](std::string message) -> std::optional<TargetUrl> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  if (url.size() > kMaxUrlLength)
    return fail("must be at most " + std::to_string(kMaxUrlLength) + " characters");
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return fail("must not contain spaces or control characters");
  TargetUrl t;
  const std::string head = url_lower(url.substr(0, 8));
  if (head.rfind("https://", 0) == 0) {
    t.tls = true;
    url.remove_prefix(8);
  } else if (head.rfind("http://", 0) == 0) {
    url.remove_prefix(7);
  } else {
    return fail("must start with https:// (or http:// for a host in webhooks.allow_hosts)");
  }
  if (const auto hash = url.find('#'); hash != std::string_view::npos)
    return fail("must not have a fragment (#...)");
  const auto path_at = url.find_first_of("/?");
  std::string_view authority = url.substr(0, path_at);
  std::string target(path_at == std::string_view::npos ? "/" : url.substr(path_at));
  if (!target.empty() && target.front() == '?') target.insert(target.begin(), '/');
  if (authority.find('@') != std::string_view::npos) return fail("must not contain user info");
  if (authority.empty()) return fail("has no host");
  t.host_header = std::string(authority);
  std::string_view host;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("has an unclosed [ in its host");
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return fail("has characters after its IPv6 address");
      port = rest.substr(1);
    }
    for (char c : host)
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return fail("has an invalid IPv6 address");
  } else {
    const auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    for (char c : host)
      if (!valid_host_char(c)) return fail("has an invalid host name");
  }
  if (host.empty()) return fail("has no host");
  if (host.size() > 253) return fail("has a host name longer than 253 characters");
  t.host = url_lower(host);
  if (port.empty()) {
    t.port = t.tls ? "443" : "80";
  } else {
    int p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535)
      return fail("has an invalid port");
    t.port = std::to_string(p);
  }
  t.target = std::move(target);
  return t;
}

std::optional<std::string> target_policy_error(const TargetUrl& url, const AllowList& allow) {
  if (allow.allows_host(url.host)) return std::nullopt;
  if (!url.tls) return "must use https:// (plain http only for a host in webhooks.allow_hosts)";
  if (is_metadata_host_name(url.host))
    return "names a cloud metadata server (" + url.host +
           "); an admin may allow the host in webhooks.allow_hosts";
  return std::nullopt;
}

}  // namespace podium::notify
