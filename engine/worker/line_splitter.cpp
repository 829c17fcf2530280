#include "engine/worker/line_splitter.h"

namespace podium::worker {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string sanitize_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '\0') {
      out += kReplacement;
      ++i;
      continue;
    }
    const size_t n = sequence_length(in, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(in.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  // Step back over continuation bytes so that the cut falls before a lead byte.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

void LineSplitter::feed(std::string_view bytes, std::vector<std::string>& out) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!cutting_) {
      // Keep a few bytes beyond the limit: a "\r" to strip, or the tail of a character that
      // sanitizing may shorten. utf8_prefix cuts exactly afterwards.
      const size_t room = max_ + 4 > partial_.size() ? max_ + 4 - partial_.size() : 0;
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) cutting_ = true;
    }
    if (nl == std::string_view::npos) return;
    emit(out);
    bytes.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(std::vector<std::string>& out) {
  if (!partial_.empty() || cutting_) emit(out);
}

void LineSplitter::emit(std::vector<std::string>& out) {
  if (!partial_.empty() && partial_.back() == '\r' && !cutting_) partial_.pop_back();
  std::string line = sanitize_utf8(partial_);
  if (line.size() > max_) line = std::string(utf8_prefix(line, max_));
  out.push_back(std::move(line));
  partial_.clear();
  cutting_ = false;
}

}  // namespace podium::worker
