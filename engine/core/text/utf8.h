#pragma once
// UTF-8 as RFC 3629 defines it: the one check every part of Podium uses to decide whether bytes
// are text (request path and query parameters before any SQL, log lines from workers, agents and
// imports, MaxText log lines, YAML scalars of a JobSet manifest), and the one way to make bytes
// text (invalid bytes become U+FFFD) and to cut text without splitting a character.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace podium::core {

// Length (1-4) of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
// not one: a stray continuation byte, a truncated sequence, an overlong form (C0 AF for '/'),
// a UTF-16 surrogate (ED A0 80) or a code point above U+10FFFF. i must be < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// The code point of the well-formed sequence of `len` bytes at s[i] (len from
// utf8_sequence_length, not 0).
char32_t utf8_code_point(std::string_view s, std::size_t i, std::size_t len);

// Every byte of s belongs to a well-formed sequence.
bool valid_utf8(std::string_view s);

// NUL is well-formed UTF-8, but PostgreSQL text cannot hold it.
enum class NulBytes { keep, replace };

// s made well-formed: each byte that starts no well-formed sequence becomes U+FFFD (as does NUL
// with NulBytes::replace), and the result is cut to at most max_bytes on a character boundary.
std::string sanitize_utf8(std::string_view s, NulBytes nul = NulBytes::keep,
                          std::size_t max_bytes = SIZE_MAX);

// The longest prefix of the well-formed text s that is at most max_bytes long and ends on a
// character boundary.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

}  // namespace podium::core
