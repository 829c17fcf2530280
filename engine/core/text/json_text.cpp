#include "engine/core/text/json_text.h"

#include "engine/core/text/utf8.h"

namespace podium::core {

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Printable ASCII other than the two characters JSON escapes: copied as they are.
bool plain(unsigned char c) {
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void append_escaped_utf8(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;  // printable ASCII, DEL or a byte of a well-formed UTF-8 sequence
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size() && plain(static_cast<unsigned char>(s[i]))) ++i;
  out.append(s.data(), i);
  if (i < s.size()) {
    const std::string_view rest = s.substr(i);
    if (valid_utf8(rest))
      append_escaped_utf8(out, rest);
    else
      append_escaped_utf8(out, sanitize_utf8(rest));
  }
  out += '"';
}

}  // namespace podium::core
