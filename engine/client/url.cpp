// Base URL parsing and percent-encoding for the REST client. No Beast here: these are pure
// functions the unit tests exercise without a network.

#include <cctype>
#include <string>
#include <string_view>

#include "engine/client/http_client.h"

#ifndef PODIUM_VERSION
#define PODIUM_VERSION "0.0.0"
#endif

namespace podium::client {
namespace {

std::optional<BaseUrl> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

bool valid_host_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string_view client_version() {
  return PODIUM_VERSION;
}

std::optional<BaseUrl> parse_base_url(std::string_view url, std::string* error) {
  if (url.empty()) return fail(error, "empty server URL");
  std::string_view rest = url;
  bool tls = false;
  if (const auto sep = url.find("://"); sep != std::string_view::npos) {
    std::string scheme(url.substr(0, sep));
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme == "https")
      tls = true;
    else if (scheme != "http")
      return fail(error, "unsupported URL scheme '" + scheme + "' (use http:// or https://)");
    rest = url.substr(sep + 3);
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return fail(error, "the server URL may not contain a query or fragment");
  }
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    // Credentials in a URL end up in shell history and process lists; the token has its own flag.
    return fail(error, "credentials in the server URL are not supported (use --token)");
  }
  if (authority.empty()) return fail(error, "the server URL has no host");

  BaseUrl out;
  out.tls = tls;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      return fail(error, "unterminated IPv6 address in server URL");
    out.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return fail(error, "unexpected text after IPv6 address in server URL");
      port = after.substr(1);
      if (port.empty()) return fail(error, "empty port in server URL");
    }
    if (out.host.empty()) return fail(error, "the server URL has no host");
    for (char c : out.host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return fail(error, "invalid IPv6 address in server URL");
      }
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos &&
        authority.find(':', colon + 1) != std::string_view::npos) {
      return fail(error,
                  "an IPv6 address in the server URL must be in brackets: http://[::1]:8080");
    }
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return fail(error, "empty port in server URL");
    }
    if (out.host.empty()) return fail(error, "the server URL has no host");
    for (char c : out.host) {
      if (!valid_host_char(c))
        return fail(error, "invalid character in server host '" + out.host + "'");
    }
  }

  if (port.empty()) {
    out.port = tls ? "443" : "80";
  } else {
    if (port.size() > 5)
      return fail(error, "invalid port '" + std::string(port) + "' in server URL");
    unsigned value = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return fail(error, "invalid port '" + std::string(port) + "' in server URL");
      }
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) {
      return fail(error, "port out of range '" + std::string(port) + "' in server URL");
    }
    out.port = std::to_string(value);
  }

  std::string prefix(path);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  out.prefix = std::move(prefix);
  return out;
}

std::string percent_encode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0x0F]);
    }
  }
  return out;
}

}  // namespace podium::client
