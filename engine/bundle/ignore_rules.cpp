#include "engine/bundle/ignore_rules.h"

namespace podium::bundle {

namespace {

// One character class "[...]" at the start of `p`; sets `len` to its length in the pattern.
// Returns whether `c` is in it; `len` 0 when `p` holds no complete class ('[' is then literal).
bool class_match(std::string_view p, char c, size_t& len) {
  size_t i = 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  for (; i < p.size(); ++i) {
    if (p[i] == ']' && !first) {
      len = i + 1;
      return matched != negate && c != '/';
    }
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) {
        hi = p[i + 3];
        ++i;
      }
      i += 2;
    }
    if (c >= lo && c <= hi) matched = true;
  }
  len = 0;
  return false;
}

bool match_here(std::string_view p, std::string_view s) {
  while (!p.empty()) {
    if (p.size() >= 2 && p[0] == '*' && p[1] == '*') {
      // "**/" at the start or after '/': zero or more whole directories.
      if (p.size() >= 3 && p[2] == '/') {
        const auto rest = p.substr(3);
        if (match_here(rest, s)) return true;
        for (size_t i = 0; i < s.size(); ++i)
          if (s[i] == '/' && match_here(rest, s.substr(i + 1))) return true;
        return false;
      }
      // "**" at the end (after '/'): everything inside.
      if (p.size() == 2) return true;
      // Any other "**" is an ordinary '*'.
      p.remove_prefix(1);
      continue;
    }
    const char c = p[0];
    if (c == '*') {
      const auto rest = p.substr(1);
      for (size_t i = 0; i <= s.size(); ++i) {
        if (match_here(rest, s.substr(i))) return true;
        if (i < s.size() && s[i] == '/') return false;
      }
      return false;
    }
    if (s.empty()) return false;
    if (c == '?') {
      if (s[0] == '/') return false;
      p.remove_prefix(1);
      s.remove_prefix(1);
      continue;
    }
    if (c == '[') {
      size_t len = 0;
      const bool in = class_match(p, s[0], len);
      if (len) {
        if (!in) return false;
        p.remove_prefix(len);
        s.remove_prefix(1);
        continue;
      }
    }
    char literal = c;
    if (c == '\\' && p.size() >= 2) {
      literal = p[1];
      p.remove_prefix(1);
    }
    if (s[0] != literal) return false;
    p.remove_prefix(1);
    s.remove_prefix(1);
  }
  return s.empty();
}

std::string_view trim_trailing_spaces(std::string_view line) {
  // Trailing spaces are ignored unless escaped with a backslash.
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    if (line.size() >= 2 && line[line.size() - 2] == '\\' && line.back() == ' ') break;
    line.remove_suffix(1);
  }
  return line;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  return match_here(pattern, path);
}

void IgnoreRules::add_file(std::string_view base, std::string_view content) {
  size_t start = 0;
  while (start <= content.size()) {
    const auto nl = content.find('\n', start);
    const auto end = nl == std::string_view::npos ? content.size() : nl;
    add_line(base, content.substr(start, end - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

void IgnoreRules::add_line(std::string_view base, std::string_view line) {
  line = trim_trailing_spaces(line);
  if (line.empty() || line.front() == '#') return;
  Rule r;
  r.base = std::string(base);
  if (line.front() == '!') {
    r.negate = true;
    line.remove_prefix(1);
  } else if (line.size() >= 2 && line[0] == '\\' && (line[1] == '!' || line[1] == '#')) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.directory_only = true;
    line.remove_suffix(1);
  }
  if (line.empty()) return;
  r.anchored = line.find('/') != std::string_view::npos;
  if (line.front() == '/') line.remove_prefix(1);
  if (line.empty()) return;
  r.pattern = std::string(line);
  rules_.push_back(std::move(r));
}

bool IgnoreRules::excluded(std::string_view path, bool is_directory) const {
  bool out = false;
  for (const auto& r : rules_) {
    if (r.directory_only && !is_directory) continue;
    std::string_view rel = path;
    if (!r.base.empty()) {
      if (rel.size() <= r.base.size() || rel.compare(0, r.base.size(), r.base) != 0 ||
          rel[r.base.size()] != '/')
        continue;
      rel.remove_prefix(r.base.size() + 1);
    }
    bool hit;
    if (r.anchored) {
      hit = glob_match(r.pattern, rel);
    } else {
      const auto slash = rel.rfind('/');
      hit = glob_match(r.pattern, slash == std::string_view::npos ? rel : rel.substr(slash + 1));
    }
    if (hit) out = !r.negate;
  }
  return out;
}

}  // namespace podium::bundle
