#include "engine/core/text/utf8.h"

#include <algorithm>

namespace podium::core {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  // RFC 3629 section 4: the lead byte fixes the length and the range of the second byte, which
  // is what excludes overlong forms (C0, C1, E0 80-9F, F0 80-8F), surrogates (ED A0-BF) and code
  // points above U+10FFFF (F4 90-BF, F5-FF).
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < 0x80 || b > 0xBF) return 0;
  }
  return len;
}

char32_t utf8_code_point(std::string_view s, std::size_t i, std::size_t len) {
  // The lead byte keeps 7, 5, 4 or 3 value bits; each continuation byte adds 6.
  static constexpr unsigned char kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t cp = static_cast<unsigned char>(s[i]) & kLeadBits[len];
  for (std::size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s, NulBytes nul, std::size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(s.size() < max_bytes ? s.size() : max_bytes);
  std::size_t i = 0;
  while (i < s.size()) {
    // A run of ASCII (NUL only when kept) is well-formed as it is: copied at once, as far as it
    // fits. Nearly every log line is one such run; byte by byte it was the largest cost of the
    // server's share of a log batch (docs/benchmarks.md).
    const std::size_t limit = i + std::min(s.size() - i, max_bytes - out.size());
    std::size_t run = i;
    while (run < limit && static_cast<unsigned char>(s[run]) < 0x80 &&
           (s[run] != '\0' || nul == NulBytes::keep))
      ++run;
    if (run > i) {
      out.append(s.substr(i, run - i));
      i = run;
      continue;
    }
    std::size_t len = utf8_sequence_length(s, i);
    if (len == 1 && s[i] == '\0' && nul == NulBytes::replace) len = 0;
    const std::string_view piece = len == 0 ? kReplacement : s.substr(i, len);
    if (piece.size() > max_bytes - out.size()) break;  // the next character does not fit whole
    out.append(piece);
    i += len == 0 ? 1 : len;
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = max_bytes;
  // Step back over continuation bytes so that the cut falls before a lead byte.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

}  // namespace podium::core
