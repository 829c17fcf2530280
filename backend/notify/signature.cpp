#include "backend/notify/signature.h"

#include <sodium.h>

namespace podium::notify {

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  // The _init form takes a key of any length (hashed first when longer than a block, RFC 2104).
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()),
                                message.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(sizeof mac * 2);
  for (unsigned char b : mac) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

std::string signature_header(std::string_view secret, std::int64_t unix_seconds,
                             std::string_view body) {
  const std::string t = std::to_string(unix_seconds);
  std::string signed_text;
  signed_text.reserve(t.size() + 1 + body.size());
  signed_text.append(t).append(".").append(body);
  return "t=" + t + ",v1=" + hmac_sha256_hex(secret, signed_text);
}

}  // namespace podium::notify
