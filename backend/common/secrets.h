#pragma once
// Random tokens and their hashes, password hashing. libsodium behind it.
//
// API tokens carry 32 random bytes; only their SHA-256 is stored, so a database leak does not
// leak usable tokens, and lookups stay a single indexed equality (a slow hash is not needed for
// 256-bit random secrets). Passwords are low-entropy, so they get argon2id (libsodium's moderate
// limits).

#include <optional>
#include <string>
#include <string_view>

namespace podium::secrets {

// Must be called once before any other function (idempotent, thread-safe).
void init();

// "pdm_" + base64url(32 random bytes). prefix distinguishes kinds: "pdm_" user, "pdw_" worker.
std::string new_token(std::string_view prefix = "pdm_");
// Lower-case hex SHA-256 of the token.
std::string token_hash(std::string_view token);
// Random bytes as lower-case hex (ids, session ids, keys).
std::string random_hex(size_t bytes);

// argon2id string (includes salt and parameters). nullopt only if hashing ran out of memory.
std::optional<std::string> hash_password(std::string_view password);
bool verify_password(std::string_view stored_hash, std::string_view password);
// True when the stored hash was made with other parameters than hash_password uses now (so a
// successful sign-in should store a fresh one).
bool password_needs_rehash(std::string_view stored_hash);

// Keyed MAC for opaque cursors: hex of BLAKE2b-256(key, message).
std::string mac(std::string_view key, std::string_view message);
bool constant_time_equal(std::string_view a, std::string_view b);

std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace podium::secrets
