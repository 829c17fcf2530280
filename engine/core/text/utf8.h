#pragma once
// UTF-8 as RFC 3629 defines it: the one check every part of Podium uses to decide whether bytes
// are text (request path and query parameters before any SQL, MaxText log lines).

#include <cstddef>
#include <string_view>

namespace podium::core {

// Length (1-4) of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
// not one: a stray continuation byte, a truncated sequence, an overlong form (C0 AF for '/'),
// a UTF-16 surrogate (ED A0 80) or a code point above U+10FFFF. i must be < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// Every byte of s belongs to a well-formed sequence.
bool valid_utf8(std::string_view s);

}  // namespace podium::core
