#pragma once
// The Podium-Signature header of a delivery: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
// "<t>.<body>")>". The timestamp is inside the MAC so that a receiver can refuse replays of an
// old delivery (compare t with its clock) without trusting an unsigned header.

#include <cstdint>
#include <string>
#include <string_view>

namespace podium::notify {

// Lower-case hex of HMAC-SHA256(key, message) (RFC 2104; any key length).
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

std::string signature_header(std::string_view secret, std::int64_t unix_seconds,
                             std::string_view body);

}  // namespace podium::notify
