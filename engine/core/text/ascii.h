#pragma once
// ASCII case folding for matching log lines and names (locale-independent: the C locale's
// tolower on each byte, so UTF-8 sequences pass through unchanged).
#include <cctype>
#include <string>
#include <string_view>

namespace podium::core {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `s` without leading and trailing ASCII whitespace.
inline std::string_view ascii_trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace podium::core
