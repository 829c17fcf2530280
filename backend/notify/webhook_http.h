#pragma once
// The HTTP client of webhook deliveries. Every request has a deadline for resolving and
// connecting, a deadline for the whole exchange, and a bound on the response it reads; https
// verifies the receiver's certificate and name (OpenSSL, the system's trust store or
// webhooks.ca_file). The name is resolved once, each address is judged by the SSRF guard
// (address_guard.h), and only addresses that passed are connected to. Redirects are not
// followed (a 3xx is a failed attempt): following one would skip the guard.

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/notify/address_guard.h"
#include "backend/notify/target_url.h"

namespace podium::notify {

struct HttpLimits {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};  // resolve + connect + TLS
  std::chrono::milliseconds total_timeout{std::chrono::seconds(10)};   // the whole exchange
  size_t max_response_bytes = 64 * 1024;
  std::string ca_file;  // "" = the system's trust store
};

struct PostResult {
  int status = 0;       // the receiver's HTTP status; 0 when there was no answer
  std::string error;    // why there was no (acceptable) answer; "" on a 2xx
  std::string address;  // the address connected to, "" when none
  bool delivered() const { return status >= 200 && status < 300; }
};

// Resolves url.host (within limits.connect_timeout) and returns the addresses that may be
// called, or why none may (every address forbidden, or the name does not resolve).
struct ResolvedTarget {
  std::vector<std::string> addresses;
  std::string error;  // "" when addresses is not empty
};
ResolvedTarget resolve_target(const TargetUrl& url, const AllowList& allow,
                              std::chrono::milliseconds timeout);

// POSTs `body` (application/json) with `headers` to the URL, connecting only to an address
// that passed the guard. Throws nothing.
PostResult post_webhook(const TargetUrl& url, const AllowList& allow,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::string& body, const HttpLimits& limits);

}  // namespace podium::notify
