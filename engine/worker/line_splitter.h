#pragma once
// Splits a byte stream (a child's stdout or stderr) into log lines.
//
// A line ends at '\n'; a "\r\n" ending loses its '\r' too. A partial last line is a line when the
// stream ends (finish()). A line longer than kMaxLineBytes is cut to that length and the rest of
// it, up to its newline, is dropped, so memory stays bounded whatever the child writes. Every
// line comes out as valid UTF-8 without NUL bytes (what JSON and PostgreSQL text accept):
// invalid bytes and NUL become U+FFFD, and a cut never splits a character
// (core::sanitize_utf8).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace podium::worker {

inline constexpr size_t kMaxLineBytes = 64 * 1024;

class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes = kMaxLineBytes) : max_(max_line_bytes) {}

  // Appends the complete lines found in `bytes` to `out`.
  void feed(std::string_view bytes, std::vector<std::string>& out);
  // End of stream: the partial line, if any, becomes a line.
  void finish(std::vector<std::string>& out);

 private:
  void emit(std::vector<std::string>& out);

  size_t max_;
  std::string partial_;   // raw bytes of the current line (at most max_ + a few)
  bool cutting_ = false;  // the current line passed the limit: drop bytes until '\n'
};

}  // namespace podium::worker
