#include "backend/common/secrets.h"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace podium::secrets {

namespace {
constexpr unsigned long long kPasswordOpsLimit = crypto_pwhash_OPSLIMIT_MODERATE;
constexpr size_t kPasswordMemLimit = crypto_pwhash_MEMLIMIT_MODERATE;
}  // namespace

void init() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
}

namespace {
std::string to_hex(const unsigned char* data, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, n);
  out.pop_back();
  return out;
}
}  // namespace

std::string base64url_encode(std::string_view bytes) {
  const size_t len =
      sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  std::string out(len, '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(len - 1);  // drop the terminating NUL
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  std::string out(text.size(), '\0');
  size_t bin_len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &bin_len, &end,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      end != text.data() + text.size())
    return std::nullopt;
  out.resize(bin_len);
  return out;
}

std::string new_token(std::string_view prefix) {
  unsigned char buf[32];
  randombytes_buf(buf, sizeof buf);
  return std::string(prefix) +
         base64url_encode(std::string_view(reinterpret_cast<char*>(buf), sizeof buf));
}

std::string token_hash(std::string_view token) {
  unsigned char out[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(out, reinterpret_cast<const unsigned char*>(token.data()), token.size());
  return to_hex(out, sizeof out);
}

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  randombytes_buf(buf.data(), buf.size());
  return to_hex(buf.data(), buf.size());
}

std::optional<std::string> hash_password(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  // libsodium's moderate limits (256 MiB, 3 passes): a stolen hash costs an attacker that much
  // per guess. Sign-ins are rare, rate-limited and run a few at a time (auth_routes.cpp), so
  // the server can afford it.
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), kPasswordOpsLimit,
                            kPasswordMemLimit, crypto_pwhash_ALG_ARGON2ID13) != 0)
    return std::nullopt;
  return std::string(out);
}

bool verify_password(std::string_view stored_hash, std::string_view password) {
  std::string h(stored_hash);  // needs a NUL-terminated copy
  return crypto_pwhash_str_verify(h.c_str(), password.data(), password.size()) == 0;
}

bool password_needs_rehash(std::string_view stored_hash) {
  std::string h(stored_hash);
  // 1: other parameters (a hash made before the limits were raised); -1: not an argon2id string.
  return crypto_pwhash_str_needs_rehash(h.c_str(), kPasswordOpsLimit, kPasswordMemLimit) != 0;
}

std::string mac(std::string_view key, std::string_view message) {
  unsigned char out[32];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size(), reinterpret_cast<const unsigned char*>(key.data()),
                     std::min<size_t>(key.size(), crypto_generichash_KEYBYTES_MAX));
  return to_hex(out, sizeof out);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace podium::secrets
